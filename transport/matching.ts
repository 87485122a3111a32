/**
 * Message matching shared by the devices (seed 002, Fig. 3): an arrival either completes a posted
 * receive or waits in the unexpected queue; a posted receive either takes the oldest unexpected
 * arrival or waits. Both queues are FIFO per envelope, which is what keeps point-to-point order.
 */
import type { Envelope } from './device.js';

export function envelopeKey(envelope: Envelope): string {
  return `${envelope.context}/${envelope.source}/${envelope.destination}/${envelope.tag}`;
}

/** A first-in first-out queue whose shift is O(1), for long runs of unmatched messages. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  *values(): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i += 1) yield this.items[i];
  }
}

/** `Arrival` is what a device keeps for an unmatched message, `Posted` what it keeps for a receive. */
export class MatchingQueues<Arrival, Posted> {
  private readonly unexpected = new Map<string, Fifo<Arrival>>();
  private readonly posted = new Map<string, Fifo<Posted>>();

  /** A message arrived: returns the receive it completes, or queues it as unexpected. */
  arrive(envelope: Envelope, arrival: Arrival): Posted | undefined {
    const key = envelopeKey(envelope);
    const receive = take(this.posted, key);
    if (receive === undefined) enqueue(this.unexpected, key, arrival);
    return receive;
  }

  /** A receive was posted: returns the arrival it takes, or queues the receive. */
  post(envelope: Envelope, receive: Posted): Arrival | undefined {
    const key = envelopeKey(envelope);
    const arrival = take(this.unexpected, key);
    if (arrival === undefined) enqueue(this.posted, key, receive);
    return arrival;
  }

  probe(envelope: Envelope): boolean {
    return (this.unexpected.get(envelopeKey(envelope))?.length ?? 0) > 0;
  }

  /** Removes and returns the posted receives that satisfy `predicate` (used when a peer is lost). */
  removePosted(predicate: (receive: Posted) => boolean): Posted[] {
    const removed: Posted[] = [];
    for (const [key, queue] of this.posted) {
      const kept = new Fifo<Posted>();
      for (const receive of queue.values()) (predicate(receive) ? removed : kept).push(receive);
      if (kept.length === 0) this.posted.delete(key);
      else this.posted.set(key, kept);
    }
    return removed;
  }

  /** Envelope keys and counts of messages that arrived but were never received. */
  unreceived(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [key, queue] of this.unexpected) counts.set(key, queue.length);
    return counts;
  }
}

function take<T>(queues: Map<string, Fifo<T>>, key: string): T | undefined {
  const queue = queues.get(key);
  if (queue === undefined) return undefined;
  const item = queue.shift();
  if (queue.length === 0) queues.delete(key);
  return item;
}

function enqueue<T>(queues: Map<string, Fifo<T>>, key: string, item: T): void {
  let queue = queues.get(key);
  if (queue === undefined) {
    queue = new Fifo<T>();
    queues.set(key, queue);
  }
  queue.push(item);
}
