/**
 * Where things are in shared memory.
 *
 * Thread memory (one SharedArrayBuffer per process with worker-thread endpoints, made by the main
 * thread and handed to each worker): a doorbell word per thread, then a ring for each ordered pair
 * of threads, (from, to) at index from × threads + to.
 *
 * An endpoint's segment (for its peers in other processes of the host; native/shm.cc maps it):
 *   Int32 0 magic   1 ready   2 sender count   3 ring capacity   16 mapped count   32 doorbell
 *   64.. sender ranks
 * then one ring per sender, in the order of the rank table. Its creator fills the table and sets
 * ready; each sender maps it and counts itself in; once all have, the creator unlinks it.
 */
import { ringBytes } from './ring.js';

const CACHE_LINE = 64;
const PAGE = 256;

const align = (bytes: number, to: number) => Math.ceil(bytes / to) * to;

// ---- thread memory ----

/** The memory the threads of one process share for their rings, laid out below. */
export interface ThreadMemory {
  readonly buffer: SharedArrayBuffer;
  /** Bytes of each ring's data. */
  readonly ringCapacity: number;
}

export function threadMemoryBytes(threads: number, capacity: number): number {
  return align(threads * CACHE_LINE, PAGE) + threads * threads * ringBytes(capacity);
}

export function threadBellIndex(thread: number): number {
  return (thread * CACHE_LINE) / 4;
}

export function threadRingOffset(threads: number, capacity: number, from: number, to: number): number {
  return align(threads * CACHE_LINE, PAGE) + (from * threads + to) * ringBytes(capacity);
}

// ---- endpoint segments ----

export const SEGMENT_MAGIC = 0x63636a73;
export const SEGMENT = { magic: 0, ready: 1, senders: 2, capacity: 3, mapped: 16, bell: 32, ranks: 64 } as const;

export function segmentRingsOffset(senders: number): number {
  return align(SEGMENT.ranks * 4 + senders * 4, PAGE);
}

export function segmentBytes(senders: number, capacity: number): number {
  return segmentRingsOffset(senders) + senders * ringBytes(capacity);
}

/** Where the ring of the sender at `index` of the rank table starts. */
export function segmentRingOffset(senders: number, capacity: number, index: number): number {
  return segmentRingsOffset(senders) + index * ringBytes(capacity);
}
