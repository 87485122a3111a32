/**
 * The send pipeline of the shared-memory device, to one peer: a frame goes into the peer's ring
 * whole where it fits without wrapping (memory-frames.ts), as a byte stream where it wraps
 * (stream.ts), and a large one in pieces, each visible at once; a frame that finds the ring full
 * waits here, in order, and goes in as the reader makes room. A large frame the engine lets us lend
 * goes by single copy (single-copy.ts): a stand-in frame says where its bodies lie, and they stay
 * lent until the peer counts them fetched (meanwhile this end may copy its share of them).
 */
import type { Releasable } from '../device.js';
import { copyBodies } from '../frame.js';
import type { Frame } from '../frame.js';
import { MemoryFrames, padded, paddedFrameBytes } from '../memory-frames.js';
import { carriedBytes, prefixBytes, writePrefix } from '../stream.js';
import type { ByteCopy } from '../stream.js';
import { Queue } from '../../src/base/queue.js';
import { bytesAt } from '../../src/base/typed-arrays.js';
import type { BinaryValue } from '../../src/base/typed-arrays.js';
import type { ShmNative } from './native.js';
import type { Ring } from './ring.js';
import { CopyJob, SINGLE_COPY_BYTES, byReference, helpCopy } from './single-copy.js';
import type { LentBodies } from './single-copy.js';
import type { ShmStats } from './stats.js';

/**
 * A large frame goes into the ring in pieces of this size, each published as soon as it is in, so
 * that the reader's copy out overlaps the writer's copy in (on two cores, a hop then costs about
 * one copy instead of two).
 */
const PIPELINE_BYTES = 64 * 1024;

/** A frame on its way into a full ring: the part written so far. */
class Outgoing {
  /** 0: the prefix, 1..n: the bodies, n + 1: the padding. */
  stage = 0;
  offset = 0;
  prefix: Buffer | undefined;
  done = false;

  constructor(
    readonly frame: Frame,
    public releasable: Releasable | undefined,
  ) {}
}

export interface RingSenderOptions {
  readonly peer: number;
  /** The ring this endpoint writes and the peer reads. */
  readonly ring: Ring;
  /** Rings the peer's doorbell if it sleeps. */
  readonly wake: () => void;
  /** Whether large frames may go to the peer by single copy (the peer reads our memory). */
  readonly singleCopy: () => boolean;
  /** The peer's process, whose memory our share of its copies is written into (where single copy may be used). */
  readonly peerProcess: number | undefined;
  readonly native: ShmNative | undefined;
  readonly copy: ByteCopy;
  readonly stats: ShmStats;
  /** Whether this thread spins while its calls wait: a core of our own to copy our share with (DeviceHost.spins). */
  readonly spins: () => boolean;
}

/** Frames to one peer: its ring, what waits for room in it, and what the peer reads from our memory. */
export class RingSender {
  readonly ring: Ring;
  readonly wake: () => void;
  private readonly outbox = new Queue<Outgoing>();
  /** Frames the peer reads from our memory (single copy), oldest first: released once it counts them fetched. */
  private readonly awaitingFetch = new Queue<LentBodies>();
  /** How many of our frames the peer had fetched when we last looked. */
  private fetchesSeen = 0;
  /** The copy jobs the peer offers us (in the ring's header). */
  private readonly theirJobs: CopyJob;
  /** We copy chunks of the peer's jobs (until writing its memory fails once). */
  private helps = true;
  /** Whole frames, in place in the ring; the stream writer takes frames that wrap. */
  private readonly writer: MemoryFrames;
  private readonly stats: ShmStats;

  constructor(private readonly options: RingSenderOptions) {
    this.ring = options.ring;
    this.wake = options.wake;
    this.stats = options.stats;
    this.writer = new MemoryFrames(this.ring.buffer, this.ring.dataOffset, this.ring.capacity, options.copy);
    this.theirJobs = new CopyJob(this.ring.jobWords);
  }

  /** Whether frames sent with `lend` may stay here until the peer copies them (Device.lendsTo). */
  lends(): boolean {
    return this.options.singleCopy();
  }

  /** Device.send for this peer. */
  send(frame: Frame, releasable: Releasable | undefined, lend: boolean): boolean {
    if (lend && releasable !== undefined && carriedBytes(frame) > SINGLE_COPY_BYTES && this.options.singleCopy()) {
      // The peer reads the bodies from where they are when the frame arrives, and they are ours
      // again once it counts them fetched. (Only where the engine says the sender may wait that
      // long: a sendAsync goes on at once, and would otherwise wait for a peer busy computing.)
      const { stand, lent } = byReference(frame, releasable, this.options.native as ShmNative);
      this.send(stand, undefined, false);
      this.awaitingFetch.push(lent);
      this.stats.singleCopies += 1;
      return false;
    }
    if (this.outbox.length === 0 && this.writeWhole(frame)) {
      this.ring.publish();
      this.wake();
      return true;
    }
    const outgoing = new Outgoing(frame, undefined);
    this.outbox.push(outgoing);
    this.stats.queuedBytes += carriedBytes(frame);
    this.stats.queuedHighWater = Math.max(this.stats.queuedHighWater, this.stats.queuedBytes);
    this.flush();
    if (outgoing.done) return true;
    if (releasable === undefined) {
      // The caller may reuse its buffers now: the rest goes out of copies.
      copyBodies(frame);
      return true;
    }
    outgoing.releasable = releasable;
    return false;
  }

  /** One poll: releases what the peer fetched, copies our share of what it fetches, writes what waits; says how much moved. */
  progress(): number {
    let moved = 0;
    if (this.awaitingFetch.length > 0) {
      moved += this.releaseFetched();
      // Waiting here anyway, and a core of our own: copy our part of what the peer fetches.
      if (this.helps && this.awaitingFetch.length > 0 && this.options.spins()) moved += this.help();
    }
    if (this.outbox.length > 0) {
      const queued = this.ring.written;
      this.flush();
      if (this.ring.written !== queued) moved += 1;
    }
    return moved;
  }

  /** Releases the bodies of our frames the peer has fetched since we last looked; returns how many. */
  releaseFetched(): number {
    const fetched = this.ring.fetched;
    const count = Math.min((fetched - this.fetchesSeen) >>> 0, this.awaitingFetch.length);
    this.fetchesSeen = fetched;
    for (let i = 0; i < count; i += 1) (this.awaitingFetch.shift() as LentBodies).releasable.released();
    return count;
  }

  /** Whether a poll would move something now: queued output that has room, or frames the peer fetched. */
  canMove(): boolean {
    return (this.outbox.length > 0 && this.ring.room(1) > 0) || (this.awaitingFetch.length > 0 && this.ring.fetched !== this.fetchesSeen);
  }

  /** Output queued for a full ring, or bodies the peer is still to read: only the peer moves it on. */
  waitsForPeer(): boolean {
    return this.outbox.length > 0 || this.awaitingFetch.length > 0;
  }

  describe(): string {
    return `to ${this.options.peer}: ${this.ring.describe()}, ${this.outbox.length} queued, ${this.awaitingFetch.length} awaiting fetch`;
  }

  /** Copies chunks of the job the peer offers for bodies we lend it; stops helping a peer whose memory we may not write. */
  private help(): number {
    try {
      const chunks = helpCopy(this.theirJobs, this.awaitingFetch, this.options.peerProcess as number, this.options.native as ShmNative);
      this.stats.helpedChunks += chunks;
      return chunks;
    } catch {
      this.helps = false;
      return 0;
    }
  }

  /** Writes as much of the queue as the ring takes, in order; makes it visible and wakes the peer. */
  private flush(): void {
    const ring = this.ring;
    while (this.outbox.length > 0) {
      const item = this.outbox.at(0);
      const whole = item.stage === 0 && item.offset === 0 && this.writeWhole(item.frame);
      if (!whole && !this.writeSome(item)) {
        // Full: tell the reader, then look again in case it made room in between.
        this.stats.ringFull += 1;
        ring.setProducerWaiting(true);
        if (ring.room() === 0) break;
        ring.setProducerWaiting(false);
        continue;
      }
      this.outbox.shift();
      this.stats.queuedBytes -= carriedBytes(item.frame);
      item.done = true;
      item.releasable?.released();
    }
    ring.publish();
    this.wake();
  }

  /** Writes a frame whole, if the ring has room for all of it now. */
  private writeWhole(frame: Frame): boolean {
    const ring = this.ring;
    const total = paddedFrameBytes(frame);
    if (ring.room(total) < total) return false;
    const at = ring.reserve(total);
    if (at >= 0) {
      this.writer.write(at, frame);
      ring.advance(total);
      return true;
    }
    // It wraps around the ring's end: as a byte stream.
    const prefix = prefixBytes(frame);
    const scratch = Buffer.allocUnsafe(prefix);
    writePrefix(scratch, 0, frame);
    ring.put(scratch);
    for (const body of frame.bodies) ring.putBinary(body);
    ring.advance(total - prefix - carriedBytes(frame));
    return true;
  }

  /** Streams a frame into the ring, piece by piece; true once all of it is in, false when the ring is full. */
  private writeSome(item: Outgoing): boolean {
    const ring = this.ring;
    const { frame } = item;
    const bodies = frame.bodies.length;
    const unpadded = prefixBytes(frame) + carriedBytes(frame);
    while (item.stage <= bodies + 1) {
      let source: BinaryValue | undefined;
      if (item.stage === 0) {
        if (item.prefix === undefined) {
          item.prefix = Buffer.allocUnsafe(prefixBytes(frame));
          writePrefix(item.prefix, 0, frame);
        }
        source = item.prefix;
      } else if (item.stage <= bodies) {
        source = frame.bodies[item.stage - 1] as BinaryValue;
      }
      const length = source === undefined ? padded(unpadded) - unpadded : source.byteLength;
      const remaining = length - item.offset;
      if (remaining > 0) {
        const take = Math.min(ring.room(remaining), remaining, PIPELINE_BYTES);
        if (take === 0) return false;
        // A piece of the body, never all of it at once: a body may be longer than one view (MAX_BYTE_VIEW).
        if (source !== undefined) ring.put(bytesAt(source, item.offset, take));
        else ring.advance(take);
        // Each piece is visible at once: the reader copies it out while the next one goes in.
        ring.publish();
        item.offset += take;
        if (take < remaining) continue;
      }
      item.stage += 1;
      item.offset = 0;
    }
    return true;
  }
}
