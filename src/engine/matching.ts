/**
 * Message matching, as in Open MPI's ob1: per group and receiving member a mailbox; in it, for
 * point-to-point traffic, a queue per source of messages that arrived unmatched (in arrival
 * order) and of receives posted for that source (in post order), plus the receives posted for
 * ANY_SOURCE; for collective traffic, queues keyed by (operation counter, source) as one number.
 * The common cases cost a few array and map lookups; only tags that skip ahead and wildcard
 * receives scan. Stamps order arrivals (for ANY_SOURCE) and posts (a specific receive and a
 * wildcard one compete by who was posted first), which is MPI's non-overtaking rule.
 */
import { ANY_SOURCE } from './calls.js';
import type { AlgorithmProbe, Probe, Receive } from './calls.js';
import type { Frame } from '../../transport/frame.js';
import { knowsAlgorithm } from './signature.js';
import { Queue } from '../base/queue.js';

/** Point-to-point traffic from one source to one member in one group. */
class SourceQueue {
  readonly arrivals = new Queue<Frame>();
  readonly receives = new Queue<Receive>();
}

/** Receives and probes: which point-to-point tags they take. */
export interface TagFilter {
  acceptsTag(tag: number): boolean;
}

/** Collective keys: operation counters stay below 2^31 and group ranks below 2^21. */
export const MAX_GROUP_SIZE = 1 << 21;

function collectiveKey(tag: number, source: number): number {
  return tag * MAX_GROUP_SIZE + source;
}

function tagOfKey(key: number): number {
  return Math.floor(key / MAX_GROUP_SIZE);
}

/** Aborted collective calls remembered per mailbox (for members that have not reached them yet). */
const ABORTED_CALLS_KEPT = 64;

/** What aborting a collective call took out of a mailbox, for the engine to fail or release. */
export interface AbortedCall {
  readonly receives: Receive[];
  readonly probes: AlgorithmProbe[];
  readonly arrivals: Frame[];
}

export class Mailbox {
  private readonly sources: (SourceQueue | undefined)[] = [];
  private readonly wildcards = new Queue<Receive>();
  private readonly probes: Probe[] = [];
  private readonly collectiveArrivals = new Map<number, Queue<Frame>>();
  private readonly collectiveReceives = new Map<number, Queue<Receive>>();
  private algorithmProbes: AlgorithmProbe[] = [];
  /** Collective calls (by operation counter) that failed somewhere in the group, and why. */
  private readonly abortedCalls = new Map<number, Error>();
  /** Point-to-point messages waiting here, so wildcard receives skip the scan when there are none. */
  private unmatched = 0;
  private nextStamp = 1;
  /** Where findUnmatched found its message, or receivesFor its receive. */
  private foundIndex = -1;

  /** A message arrived: returns the receive it completes (removed from the mailbox), or keeps the frame as unmatched. */
  arrive(frame: Frame, collective: boolean): Receive | undefined {
    if (collective) {
      if (this.algorithmProbes.length > 0 && knowsAlgorithm(frame.operation)) this.algorithmKnown(frame);
      const key = collectiveKey(frame.tag, frame.source);
      const receive = takeFirst(this.collectiveReceives, key);
      if (receive === undefined) append(this.collectiveArrivals, key, frame);
      return receive;
    }
    const receives = this.receivesFor(frame);
    if (receives !== undefined) return receives.removeAt(this.foundIndex);
    frame.stamp = this.nextStamp++;
    this.sourceQueue(frame.source).arrivals.push(frame);
    this.unmatched += 1;
    for (let i = 0; i < this.probes.length; i += 1) {
      const probe = this.probes[i] as Probe;
      if (!probe.matches(frame)) continue;
      this.probes.splice(i, 1);
      i -= 1;
      probe.found(frame);
    }
    return undefined;
  }

  /** The receive a point-to-point message arriving now would complete, left in place. */
  receiveFor(frame: Frame): Receive | undefined {
    return this.receivesFor(frame)?.at(this.foundIndex);
  }

  /** The queue holding the receive that `frame` (point-to-point) matches, at foundIndex: the earliest posted of the specific and the wildcard ones. */
  private receivesFor(frame: Frame): Queue<Receive> | undefined {
    const queue = this.sources[frame.source];
    const specific = queue === undefined ? -1 : firstAccepting(queue.receives, frame.tag);
    const wildcard = firstAccepting(this.wildcards, frame.tag);
    if (specific >= 0 && (wildcard < 0 || (queue as SourceQueue).receives.at(specific).stamp < this.wildcards.at(wildcard).stamp)) {
      this.foundIndex = specific;
      return (queue as SourceQueue).receives;
    }
    if (wildcard < 0) return undefined;
    this.foundIndex = wildcard;
    return this.wildcards;
  }

  /** A receive was posted: returns the unmatched message it takes (removed), or keeps the receive. */
  post(receive: Receive): Frame | undefined {
    if (receive.collective) {
      const key = collectiveKey(receive.tagOrAny, receive.source);
      const frame = takeFirst(this.collectiveArrivals, key);
      if (frame === undefined) append(this.collectiveReceives, key, receive);
      return frame;
    }
    const queue = this.findUnmatched(receive.source, receive);
    if (queue !== undefined) {
      this.unmatched -= 1;
      return queue.arrivals.removeAt(this.foundIndex);
    }
    receive.stamp = this.nextStamp++;
    if (receive.source === ANY_SOURCE) this.wildcards.push(receive);
    else this.sourceQueue(receive.source).receives.push(receive);
    return undefined;
  }

  /** The unmatched point-to-point message a probe for (source, tag) would see, without taking it. */
  peek(source: number, tag: TagFilter): Frame | undefined {
    return this.findUnmatched(source, tag)?.arrivals.at(this.foundIndex);
  }

  addProbe(probe: Probe): void {
    this.probes.push(probe);
  }

  /** The first waiting message of collective call `tag` that names its algorithm. */
  peekAlgorithm(tag: number): Frame | undefined {
    for (const [key, queue] of this.collectiveArrivals) {
      if (tagOfKey(key) !== tag) continue;
      for (const frame of queue) if (knowsAlgorithm(frame.operation)) return frame;
    }
    return undefined;
  }

  addAlgorithmProbe(probe: AlgorithmProbe): void {
    this.algorithmProbes.push(probe);
  }

  private algorithmKnown(frame: Frame): void {
    const waiting = this.algorithmProbes.filter((probe) => probe.tag === frame.tag);
    if (waiting.length === 0) return;
    this.algorithmProbes = this.algorithmProbes.filter((probe) => probe.tag !== frame.tag);
    for (const probe of waiting) probe.found(frame);
  }

  /** Why collective call `tag` failed, if it did. */
  abortedCall(tag: number): Error | undefined {
    return this.abortedCalls.size === 0 ? undefined : this.abortedCalls.get(tag);
  }

  /** Collective call `tag` failed: remember it, and take out its receives, probes and messages. */
  abortCall(tag: number, error: Error): AbortedCall {
    if (!this.abortedCalls.has(tag)) {
      if (this.abortedCalls.size >= ABORTED_CALLS_KEPT) this.abortedCalls.delete(this.abortedCalls.keys().next().value as number);
      this.abortedCalls.set(tag, error);
    }
    const probes = this.algorithmProbes.filter((probe) => probe.tag === tag);
    this.algorithmProbes = this.algorithmProbes.filter((probe) => probe.tag !== tag);
    return { receives: takeTag(this.collectiveReceives, tag), probes, arrivals: takeTag(this.collectiveArrivals, tag) };
  }

  /** Removes a receive or probe that will never complete here (its peer was lost); true if it was here. */
  remove(call: Receive | Probe | AlgorithmProbe): boolean {
    const algorithmProbe = this.algorithmProbes.indexOf(call as AlgorithmProbe);
    if (algorithmProbe >= 0) {
      this.algorithmProbes.splice(algorithmProbe, 1);
      return true;
    }
    const index = this.probes.indexOf(call as Probe);
    if (index >= 0) {
      this.probes.splice(index, 1);
      return true;
    }
    const receive = call as Receive;
    if (receive.collective) {
      const key = collectiveKey(receive.tagOrAny, receive.source);
      const queue = this.collectiveReceives.get(key);
      const removed = queue?.removeWhere((item) => item === receive).length ?? 0;
      if (queue?.length === 0) this.collectiveReceives.delete(key);
      return removed > 0;
    }
    const queue = receive.source === ANY_SOURCE ? this.wildcards : this.sources[receive.source]?.receives;
    return (queue?.removeWhere((item) => item === receive).length ?? 0) > 0;
  }

  /** Removes and returns every unmatched message (their group is broken: nobody will receive them). */
  takeUnmatched(): Frame[] {
    const taken = [...this.unmatchedMessages()];
    for (const queue of this.sources) queue?.arrivals.removeWhere(() => true);
    this.collectiveArrivals.clear();
    this.unmatched = 0;
    return taken;
  }

  /** Every unmatched message (reported when an endpoint closes). */
  *unmatchedMessages(): IterableIterator<Frame> {
    for (const queue of this.sources) if (queue) yield* queue.arrivals;
    for (const queue of this.collectiveArrivals.values()) yield* queue;
  }

  /**
   * The queue holding the earliest-arrived unmatched message from `source` (or any source) that
   * `filter` accepts, with its index left in `foundIndex` (no allocation on the common path).
   */
  private findUnmatched(source: number, filter: TagFilter): SourceQueue | undefined {
    if (this.unmatched === 0) return undefined;
    if (source !== ANY_SOURCE) {
      const queue = this.sources[source];
      this.foundIndex = queue === undefined ? -1 : firstArrivalAccepted(queue.arrivals, filter);
      return this.foundIndex < 0 ? undefined : queue;
    }
    let best: SourceQueue | undefined;
    let bestIndex = -1;
    for (const queue of this.sources) {
      if (queue === undefined) continue;
      const index = firstArrivalAccepted(queue.arrivals, filter);
      if (index >= 0 && (best === undefined || queue.arrivals.at(index).stamp < best.arrivals.at(bestIndex).stamp)) {
        best = queue;
        bestIndex = index;
      }
    }
    this.foundIndex = bestIndex;
    return best;
  }

  private sourceQueue(source: number): SourceQueue {
    let queue = this.sources[source];
    if (queue === undefined) {
      queue = new SourceQueue();
      this.sources[source] = queue;
    }
    return queue;
  }
}

function firstAccepting(receives: Queue<Receive>, tag: number): number {
  for (let i = 0; i < receives.length; i += 1) if (receives.at(i).acceptsTag(tag)) return i;
  return -1;
}

function firstArrivalAccepted(arrivals: Queue<Frame>, filter: TagFilter): number {
  for (let i = 0; i < arrivals.length; i += 1) if (filter.acceptsTag(arrivals.at(i).tag)) return i;
  return -1;
}

function takeFirst<T>(queues: Map<number, Queue<T>>, key: number): T | undefined {
  const queue = queues.get(key);
  if (queue === undefined) return undefined;
  const item = queue.shift();
  if (queue.length === 0) queues.delete(key);
  return item;
}

/** Removes and returns every item queued under the keys of collective call `tag`. */
function takeTag<T>(queues: Map<number, Queue<T>>, tag: number): T[] {
  const taken: T[] = [];
  for (const [key, queue] of queues) {
    if (tagOfKey(key) !== tag) continue;
    taken.push(...queue);
    queues.delete(key);
  }
  return taken;
}

function append<T>(queues: Map<number, Queue<T>>, key: number, item: T): void {
  let queue = queues.get(key);
  if (queue === undefined) {
    queue = new Queue<T>();
    queues.set(key, queue);
  }
  queue.push(item);
}
