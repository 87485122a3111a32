/**
 * The progress engine of one thread (each worker thread loads its own copy of this module): the
 * one place that advances every polling device (shared memory, UCX). A call that waits spins on it
 * for a bounded, adaptive budget, since a wake-up from a blocked wait costs ~20-50 µs here while a
 * spinning hop costs well under one; then it stops spinning and the devices' events (a doorbell, a
 * socket) complete it. Completions found by one pass are delivered together: the frames go into
 * the engine, whose receives resolve their promises, and the reactions run after the pass.
 *
 * The engine registers the polling devices it connected (Engine.connect) and unregisters them as it
 * closes them; a device asks its host (DeviceHost.spins), not this module, whether the thread spins.
 *
 * Spinning pays only when every spinning endpoint has a core: masters switch it off when their
 * host runs more endpoints than it has cores. Posting a receive never spins; only waiting does:
 * a blocking call waits at once, and a call posted to be awaited later (a collective algorithm's
 * posted receive or started send, MPI's Irecv and Isend) waits the moment its caller awaits it
 * while it is still pending (`whenAwaited`).
 *
 * Calls that complete at once (a sendAsync within the receiver's window) resolve through
 * microtasks only, so a loop of them would keep the event loop from turning:
 * timers, sockets and peer losses would wait. `mustYield` bounds such a stretch to about
 * STARVATION_BOUND_MS: it looks at the clock every CALLS_PER_LOOK calls and, once the event loop
 * has not turned for that long, the call resolves from a setImmediate instead.
 */
import type { PendingCall } from './calls.js';
import type { PollingDevice } from '../../transport/device.js';

/** What the progress engine polls: the device contract's polling part (the engine registers such devices, see Engine.connect). */
export type { PollingDevice };

const MINIMUM_BUDGET_MICROSECONDS = 2;
/** Misses in a row before the budget shrinks: a peer that answers in time now and then keeps it whole. */
const PATIENCE = 8;
/** The longest spinUntil spins for a wait of known length. */
const LONGEST_KNOWN_WAIT_MICROSECONDS = 10_000;
/** Polls between two reads of the clock (a read costs about as much as a few empty polls). */
const POLLS_PER_CLOCK_READ = 16;
/** The longest calls that complete at once may keep this thread's event loop from turning, about (ms). */
export const STARVATION_BOUND_MS = 5;
/** Calls that complete at once between two looks at the clock (a look costs more than the bookkeeping of a call). */
const CALLS_PER_LOOK = 64;

/** Counters of one thread's waiting (see ColGroupMaster.waitCounts), since the thread started. */
export interface WaitCounts {
  /** Calls that had to wait: still pending when their caller waited for them. */
  waits: number;
  /** Waits that spun (spinning allowed, a polling device connected). */
  spins: number;
  /** Spins that completed their call or moved anything. */
  hits: number;
  /** Spins that moved nothing. */
  misses: number;
  /** Waits left to the event loop, their call still pending: after a spin (the doorbells armed), or unspun (spinning not allowed). */
  sleeps: number;
  /** Doorbells (shm) and event fds (UCX) that rang for this thread. */
  wakeUps: number;
  /** Collective calls completed on this thread. */
  collectives: number;
  /** Passes over the polling devices. */
  polls: number;
  /** Calls that completed at once but resolved on the next turn of the event loop (mustYield). */
  yields: number;
}

export class ProgressEngine {
  private readonly devices: PollingDevice[] = [];
  /** Endpoints of this thread that asked not to spin (their host has fewer cores than endpoints). */
  private vetoes = 0;
  private maximumMicroseconds = 50;
  private budgetMicroseconds = 50;
  private missesInARow = 0;
  /** Calls that completed at once since the last look at the clock. */
  private quickCalls = 0;
  /** When a look found no turn of the event loop pending (and asked for one with setImmediate), or -1 once it turned. */
  private turnAwaitedSince = -1;
  private readonly turned = (): void => {
    this.turnAwaitedSince = -1;
  };
  readonly stats: WaitCounts = { waits: 0, spins: 0, hits: 0, misses: 0, sleeps: 0, wakeUps: 0, collectives: 0, polls: 0, yields: 0 };

  register(device: PollingDevice): void {
    if (!this.devices.includes(device)) this.devices.push(device);
  }

  unregister(device: PollingDevice): void {
    const index = this.devices.indexOf(device);
    if (index >= 0) this.devices.splice(index, 1);
  }

  /** The longest a waiting call spins (0: never). */
  setBudget(microseconds: number): void {
    this.maximumMicroseconds = microseconds;
    this.budgetMicroseconds = microseconds;
  }

  /** An endpoint whose host is oversubscribed forbids spinning until it calls the returned function. */
  forbidSpinning(): () => void {
    this.vetoes += 1;
    let lifted = false;
    return () => {
      if (lifted) return;
      lifted = true;
      this.vetoes -= 1;
    };
  }

  get spinning(): boolean {
    return this.vetoes === 0 && this.maximumMicroseconds > 0 && this.devices.length > 0;
  }

  /** One pass over every polling device; returns the frames moved. */
  poll(): number {
    let moved = 0;
    for (let i = 0; i < this.devices.length; i += 1) moved += (this.devices[i] as PollingDevice).progress();
    this.stats.polls += 1;
    return moved;
  }

  /**
   * Spins until `call` stops waiting or the budget is spent without anything moving (a large
   * message streaming through a device keeps the spin alive). A spin that succeeds restores the
   * whole budget; a run of failures halves it each time (a peer that is computing costs little
   * spinning), down to a floor, and every PATIENCE-th spin tries the whole budget again. Counted
   * in `stats`: a wait, a spin (or, where spinning is off, straight away a sleep), a hit or a miss.
   */
  wait(call: PendingCall): void {
    if (!call.linked) return;
    this.stats.waits += 1;
    if (!this.spinning) {
      this.stats.sleeps += 1;
      return;
    }
    const movedAtAll = this.spin(() => !call.linked, this.nextBudget());
    if (call.linked) this.sleep();
    this.adapt(!call.linked || movedAtAll);
  }

  /**
   * Spins until `ready()` holds (a wait on shared memory: a collective segment's flags), polling
   * the devices meanwhile, for the budget `wait` would spin, adapting it alike; not at all without
   * `maySpin` (the caller knows a spin could not help: the awaited member runs in this thread).
   * Where the caller can tell how long the wait should take (`knownMicroseconds`: members copying
   * a value of known size), it spins that long instead (at least the budget, at most
   * LONGEST_KNOWN_WAIT_MICROSECONDS) and leaves the budget alone, which a run of such waits would
   * otherwise shrink as if the peer computed. Returns whether `ready()` holds; the caller sleeps
   * otherwise (its own way), which counts as a sleep.
   */
  spinUntil(ready: () => boolean, maySpin = true, knownMicroseconds?: number): boolean {
    if (ready()) return true;
    this.stats.waits += 1;
    const hit = maySpin && this.spinning && this.spinFor(ready, knownMicroseconds);
    if (!hit) this.stats.sleeps += 1;
    return hit;
  }

  private spinFor(ready: () => boolean, knownMicroseconds: number | undefined): boolean {
    if (knownMicroseconds === undefined) {
      const movedAtAll = this.spin(ready, this.nextBudget());
      const hit = ready();
      this.adapt(hit || movedAtAll);
      return hit;
    }
    this.stats.spins += 1;
    this.spin(ready, Math.min(Math.max(knownMicroseconds, this.maximumMicroseconds), LONGEST_KNOWN_WAIT_MICROSECONDS));
    const hit = ready();
    this.count(hit);
    return hit;
  }

  /** The budget of the next spin. */
  private nextBudget(): number {
    this.stats.spins += 1;
    // A shrunken budget is spent whole now and then: waits that merely got longer than it (the
    // peer copying a large message) hit again and restore it, instead of sleeping ever after.
    return this.budgetMicroseconds < this.maximumMicroseconds && this.stats.spins % PATIENCE === 0 ? this.maximumMicroseconds : this.budgetMicroseconds;
  }

  /** After a spin: a hit restores the whole budget, a run of misses halves it. */
  private adapt(hit: boolean): void {
    // A spin during which the protocol advanced (a handshake, a stream) was worth it, like a hit.
    this.count(hit);
    if (hit) {
      this.missesInARow = 0;
      this.budgetMicroseconds = this.maximumMicroseconds;
    } else {
      this.missesInARow += 1;
      if (this.missesInARow >= PATIENCE) this.budgetMicroseconds = Math.max(MINIMUM_BUDGET_MICROSECONDS, this.budgetMicroseconds / 2);
    }
  }

  /** Counts a spin's outcome. */
  private count(hit: boolean): void {
    if (hit) this.stats.hits += 1;
    else this.stats.misses += 1;
  }

  /**
   * Spins for `call` as `wait` does, but for a budget of the caller's (at most the whole one)
   * and without adapting: what is at stake is known (a sendAsync's copy, see Engine.send), not
   * guessed from how the peers answered so far. Then `giveUp` runs, which may end the call (the
   * copy is made); only a call still waiting after it arms the doorbells.
   */
  waitUpTo(call: PendingCall, microseconds: number, giveUp: () => void): void {
    const waits = call.linked;
    if (waits) this.stats.waits += 1;
    if (waits && this.spinning) this.spin(() => !call.linked, Math.min(microseconds, this.maximumMicroseconds));
    giveUp();
    if (!call.linked) return;
    if (this.spinning) this.sleep();
    else if (waits) this.stats.sleeps += 1;
  }

  /**
   * What the caller of `call` awaits, `promise` being its settlement: awaiting it (await,
   * Promise.all, then) while the call is pending waits for it first, as a blocking call does
   * (`wait`: spins, then sleeps). For calls posted now and awaited later, perhaps after other
   * awaits: a collective algorithm's posted receives and started sends.
   */
  whenAwaited<T>(call: PendingCall, promise: Promise<T>): Promise<T> {
    return call.linked ? new WaitWhenAwaited(this, call, promise) : promise;
  }

  /** A device's doorbell (or event fd) rang for this thread. */
  wokenUp(): void {
    this.stats.wakeUps += 1;
  }

  /** Before this thread waits: every device arms its doorbell, so that a sender wakes it. */
  private sleep(): void {
    this.stats.sleeps += 1;
    for (const device of this.devices) device.sleep?.();
  }

  /** Polls until `done()` or `microseconds` pass without anything moving. Returns whether anything moved. */
  private spin(done: () => boolean, microseconds: number): boolean {
    const budget = BigInt(Math.round(microseconds * 1000));
    let deadline = process.hrtime.bigint() + budget;
    let moved = false;
    let movedAtAll = false;
    for (let polls = 1; !done(); polls += 1) {
      if (this.poll() > 0) moved = true;
      if (polls % POLLS_PER_CLOCK_READ === 0) {
        const now = process.hrtime.bigint();
        if (moved) {
          deadline = now + budget;
          movedAtAll = true;
          moved = false;
        } else if (now > deadline) {
          break;
        }
      }
    }
    return movedAtAll;
  }

  /** Returns true when a call that completed at once should resolve on the next turn of the event loop (see `nextTurn`). */
  mustYield(): boolean {
    if (++this.quickCalls < CALLS_PER_LOOK) return false;
    this.quickCalls = 0;
    const now = performance.now();
    if (this.turnAwaitedSince < 0) {
      this.turnAwaitedSince = now;
      setImmediate(this.turned);
      return false;
    }
    if (now - this.turnAwaitedSince < STARVATION_BOUND_MS) return false;
    this.stats.yields += 1;
    return true;
  }
}

/**
 * A pending call's promise that waits for the call (ProgressEngine.wait) when first awaited. It
 * is a Promise to its callers; only `then` (what await and Promise.all call) waits: `catch` and
 * `finally` attach handlers and nothing else (`sent.catch(() => undefined)` only marks a failure
 * handled).
 */
class WaitWhenAwaited<T> implements Promise<T> {
  private waited = false;

  constructor(
    private readonly engine: ProgressEngine,
    private readonly call: PendingCall,
    private readonly promise: Promise<T>,
  ) {}

  get [Symbol.toStringTag](): string {
    return 'Promise';
  }

  then<R1 = T, R2 = never>(onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null, onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null): Promise<R1 | R2> {
    if (!this.waited) {
      this.waited = true;
      this.engine.wait(this.call);
    }
    return this.promise.then(onFulfilled, onRejected);
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.promise.catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.promise.finally(onFinally);
  }
}

/** Resolves after the event loop's next turn (its check phase; timers and I/O run before the one after). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** This thread's progress engine. */
export const progressEngine = new ProgressEngine();
