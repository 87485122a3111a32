/**
 * A pending operation of a device (seed 002, Listing 2). `wait()` follows the iodev recipe of
 * Figure 2: a device that must be polled is spun for a bounded time before the caller blocks,
 * since a blocked wake-up costs far more than a few polls.
 */
export type Poller = () => number;

const SPIN_NANOSECONDS = 50_000n;

export class Request<T> {
  private state: 'pending' | 'completed' | 'failed' = 'pending';
  private value: T | undefined;
  private error: Error | undefined;
  private settle: { resolve: (value: T) => void; reject: (error: Error) => void } | undefined;
  private promise: Promise<T> | undefined;

  /** `poller` advances the device that will complete this request, for devices that poll. */
  constructor(private readonly poller?: Poller) {}

  static completed<T>(value: T): Request<T> {
    const request = new Request<T>();
    request.complete(value);
    return request;
  }

  static failed<T>(error: Error): Request<T> {
    const request = new Request<T>();
    request.fail(error);
    return request;
  }

  get done(): boolean {
    return this.state !== 'pending';
  }

  complete(value: T): void {
    if (this.state !== 'pending') return;
    this.state = 'completed';
    this.value = value;
    this.settle?.resolve(value);
  }

  fail(error: Error): void {
    if (this.state !== 'pending') return;
    this.state = 'failed';
    this.error = error;
    this.settle?.reject(error);
  }

  /** Non-blocking check; polls the device once. */
  test(): boolean {
    if (this.state === 'pending' && this.poller) this.poller();
    return this.state !== 'pending';
  }

  wait(): Promise<T> {
    if (this.state === 'pending' && this.poller) this.spin(this.poller);
    if (this.state === 'completed') return Promise.resolve(this.value as T);
    if (this.state === 'failed') return Promise.reject(this.error);
    if (!this.promise) {
      this.promise = new Promise<T>((resolve, reject) => {
        this.settle = { resolve, reject };
      });
    }
    return this.promise;
  }

  private spin(poller: Poller): void {
    const deadline = process.hrtime.bigint() + SPIN_NANOSECONDS;
    while (this.state === 'pending' && process.hrtime.bigint() < deadline) poller();
  }
}

/** Waits for every request; rejects with the first failure. */
export function waitAll<T>(requests: readonly Request<T>[]): Promise<T[]> {
  return Promise.all(requests.map((request) => request.wait()));
}
