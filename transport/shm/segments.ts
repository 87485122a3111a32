/**
 * The segments of the shared-memory device, for peers in other processes of this host (layout.ts
 * says what one holds): each endpoint makes its own, with a ring for each such sender, and maps
 * each peer's; once every sender has mapped it, its name goes from /dev/shm (the memory lives on
 * while mapped). The pid checks that find a process gone live here too: a peer's, and that of a
 * process killed before it could unlink its segment.
 */
import fs from 'node:fs';
import { TimeoutError, TransportError } from '../../src/base/errors.js';
import type { ByteCopy } from '../stream.js';
import { SEGMENT, SEGMENT_MAGIC, segmentBytes, segmentRingOffset } from './layout.js';
import type { ShmNative } from './native.js';
import { Ring } from './ring.js';

/** Where POSIX shared-memory names live (shm_open's directory on Linux). */
const SHM_DIRECTORY = '/dev/shm';

/** A segment's name in /dev/shm, or its doorbell's. */
const SEGMENT_NAME = /^ccjs-(\d+)-[a-z0-9]+-\d+(\.bell)?$/;

/** The name of endpoint `rank`'s segment (a POSIX shm name): unique, and it says which process made it. */
export function segmentName(rank: number): string {
  return `/ccjs-${process.pid}-${Math.random().toString(36).slice(2, 10)}-${rank}`;
}

/**
 * Where the doorbell of the segment `name` lies: beside it in /dev/shm, so that whatever removes
 * the job's segments removes it too.
 */
export function bellPath(name: string): string {
  return `${SHM_DIRECTORY}${name}.bell`;
}

/** True when process `pid` is gone (signal 0 finds no such process). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Unlinks segments of ccjs processes that are gone (killed while their job was starting, before
 * their segment could be unlinked): /dev/shm keeps nothing of a finished job.
 */
export function removeStaleSegments(): void {
  let names: string[];
  try {
    names = fs.readdirSync(SHM_DIRECTORY);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(SEGMENT_NAME.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (processGone(pid)) fs.rmSync(`${SHM_DIRECTORY}/${name}`, { force: true });
  }
}

/** This endpoint's segment: a ring for each sender in another process, in the order of its rank table. */
export class OwnSegment {
  readonly buffer: SharedArrayBuffer;
  private readonly words: Int32Array;
  private unlinked = false;
  /** Should this process end before every sender has mapped it, the names go with it. */
  private readonly unlinkAtExit = () => this.unlink();

  constructor(
    private readonly native: ShmNative,
    readonly name: string,
    /** The ranks of its senders, ascending. */
    private readonly senders: readonly number[],
    private readonly capacity: number,
  ) {
    this.buffer = native.open(name, segmentBytes(senders.length, capacity), true);
    this.words = new Int32Array(this.buffer);
    process.once('exit', this.unlinkAtExit);
  }

  /** Fills the rank table and says the segment is ready: senders map it from now on. */
  announce(): void {
    this.senders.forEach((rank, index) => (this.words[SEGMENT.ranks + index] = rank));
    this.words[SEGMENT.senders] = this.senders.length;
    this.words[SEGMENT.capacity] = this.capacity;
    this.words[SEGMENT.magic] = SEGMENT_MAGIC;
    Atomics.store(this.words, SEGMENT.ready, 1);
  }

  /** The ring endpoint `sender` writes into. */
  ringOf(sender: number, copy: ByteCopy): Ring {
    return new Ring(this.buffer, segmentRingOffset(this.senders.length, this.capacity, this.senders.indexOf(sender)), this.capacity, copy);
  }

  /** Resolves once every sender has mapped the segment; TimeoutError (naming endpoint `rank`, its owner) at `deadline`. */
  async allMapped(deadline: number, rank: number, timeoutMs: number): Promise<void> {
    while (Atomics.load(this.words, SEGMENT.mapped) < this.senders.length) {
      if (Date.now() > deadline) {
        throw new TimeoutError(`shm device of endpoint ${rank}: ${this.senders.length - Atomics.load(this.words, SEGMENT.mapped)} of its senders did not map its segment within ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /** Removes its name and its doorbell's from /dev/shm, once: nothing is left there, whatever happens later. */
  unlink(): void {
    process.off('exit', this.unlinkAtExit);
    if (this.unlinked) return;
    this.unlinked = true;
    this.native.unlink(this.name);
    fs.rmSync(bellPath(this.name), { force: true });
  }
}

/** A peer's segment, mapped once its creator has made and filled it. */
export class PeerSegment {
  readonly words: Int32Array;

  private constructor(readonly buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer);
  }

  /** Maps segment `name` of endpoint `rank`, retrying until it is ready or `deadline` passes. */
  static async map(native: ShmNative, name: string, rank: number, deadline: number): Promise<PeerSegment> {
    for (;;) {
      try {
        const buffer = native.open(name, 0, false);
        const words = new Int32Array(buffer);
        if (words[SEGMENT.magic] === SEGMENT_MAGIC && Atomics.load(words, SEGMENT.ready) === 1) return new PeerSegment(buffer);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new TransportError(`cannot map endpoint ${rank}'s shm segment ${name}: ${(error as Error).message}`, { cause: error });
      }
      if (Date.now() > deadline) throw new TimeoutError(`endpoint ${rank}'s shm segment ${name} did not appear within the timeout`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /** The ring endpoint `sender` writes into, found by its rank in the segment's table (of endpoint `rank`). */
  ringFor(sender: number, rank: number, copy: ByteCopy): Ring {
    const senders = this.words[SEGMENT.senders] as number;
    const capacity = this.words[SEGMENT.capacity] as number;
    const index = Array.from(this.words.subarray(SEGMENT.ranks, SEGMENT.ranks + senders)).indexOf(sender);
    if (index < 0) throw new TransportError(`endpoint ${rank}'s shm segment has no ring for endpoint ${sender}: the endpoints disagree on which pairs use shm (give them the same configuration)`);
    return new Ring(this.buffer, segmentRingOffset(senders, capacity, index), capacity, copy);
  }

  /** Counts this endpoint in among the segment's senders: once all are, its owner unlinks it. */
  countIn(): void {
    Atomics.add(this.words, SEGMENT.mapped, 1);
  }
}
