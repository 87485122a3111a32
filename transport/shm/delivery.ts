/**
 * Delivery of the shared-memory device, from one peer: reads the frames the peer wrote into its
 * ring (whole frames in place, memory-frames.ts; frames that wrap through the stream reader,
 * stream.ts), fetches the bodies of those it lent us from its memory (single copy, single-copy.ts),
 * hands them to the engine in order, and frees what it read for the peer.
 */
import type { DeviceHost } from '../device.js';
import { FrameType } from '../frame.js';
import type { Frame } from '../frame.js';
import { MemoryFrames } from '../memory-frames.js';
import { FrameReader } from '../stream.js';
import type { ByteCopy } from '../stream.js';
import { TransportError } from '../../src/base/errors.js';
import type { ShmNative } from './native.js';
import { RING_ALIGNMENT } from './ring.js';
import type { Ring } from './ring.js';
import { CopyJob, FLAG_BODIES_AT_SENDER, fetchBodies } from './single-copy.js';
import type { ShmStats } from './stats.js';

export interface RingReceiverOptions {
  readonly peer: number;
  /** The ring the peer writes and this endpoint reads. */
  readonly ring: Ring;
  /** Rings the peer's doorbell if it sleeps. */
  readonly wake: () => void;
  /** The process whose memory this end reads lent bodies from (single copy), if it may. */
  readonly fetchFrom: number | undefined;
  readonly native: ShmNative | undefined;
  readonly copy: ByteCopy;
  readonly stats: ShmStats;
  /** The device's host, while it has one (none once it closed). */
  readonly host: () => DeviceHost | undefined;
  /** The peer closes: what it fetched from us was counted before its Goodbye, so those sends are done, not lost. */
  readonly releaseFetched: () => void;
}

/** Frames from one peer: its ring, read and delivered. */
export class RingReceiver {
  readonly ring: Ring;
  /** The copy jobs we offer the peer (in the ring's header) for the bodies it lends us. */
  private readonly jobs: CopyJob;
  /** Whole frames, in place in the ring; the stream reader takes frames that wrap. */
  private readonly frames: MemoryFrames;
  private readonly reader: FrameReader;
  private readonly read: (data: Buffer, start: number, end: number) => void;
  /** Frames delivered by the poll under way. */
  private delivered = 0;

  constructor(private readonly options: RingReceiverOptions) {
    const { ring, copy, host, stats } = options;
    this.ring = ring;
    this.jobs = new CopyJob(ring.jobWords, () => {
      stats.lateSenders += 1;
    });
    this.frames = new MemoryFrames(ring.buffer, ring.dataOffset, ring.capacity, copy, (format) => host()?.mayPoolBodies?.(format) === true);
    const deliver = (frame: Frame) => this.arrived(frame);
    this.reader = new FrameReader({ frame: deliver, hello: () => undefined }, RING_ALIGNMENT, copy);
    this.read = (data, start, end) => {
      let at = start;
      if (this.reader.idle) {
        for (let used = this.frames.read(at, end, deliver); used > 0; used = at < end ? this.frames.read(at, end, deliver) : 0) at += used;
      }
      if (at < end) this.reader.feed(data, at, end);
    };
  }

  /** One poll: delivers what the peer wrote and frees what was read (waking the peer if it waits for room); says how much moved. */
  progress(): number {
    this.delivered = 0;
    const moved = this.ring.consume(this.read) > 0 ? 1 : 0;
    if (this.ring.release()) this.options.wake();
    return moved + this.delivered;
  }

  /** Before this endpoint sleeps: frees what was read, so that a peer waiting for room need not wait for our sleep to end. */
  releaseRead(): void {
    if (this.ring.release(true)) this.options.wake();
  }

  hasData(): boolean {
    return this.ring.hasData();
  }

  describe(): string {
    return `from ${this.options.peer}: ${this.ring.describe()}`;
  }

  private arrived(frame: Frame): void {
    const { peer, host } = this.options;
    if (frame.type === FrameType.Goodbye) this.options.releaseFetched();
    if ((frame.flags & FLAG_BODIES_AT_SENDER) !== 0) {
      try {
        fetchBodies(frame, this.options.fetchFrom ?? -1, this.options.native as ShmNative, this.jobs, (format, bytes) => this.destinationFor(frame, format, bytes));
      } catch (error) {
        // The sender is gone (or no longer readable): what it sent cannot be had.
        host()?.lost(peer, error as Error);
        return;
      }
      this.ring.countFetched();
      this.options.wake();
    }
    this.delivered += 1;
    host()?.deliver(peer, frame);
    // The peer closed on purpose (the engine saw its Goodbye first): its rings go silent.
    if (frame.type === FrameType.Goodbye) host()?.lost(peer, new TransportError('closed'));
  }

  /** Where the receive of `frame` wants its body, if anywhere (counted: the body is read there). */
  private destinationFor(frame: Frame, format: number, bytes: number): Uint8Array | undefined {
    const into = this.options.host()?.destinationFor?.(this.options.peer, frame, format, bytes);
    if (into !== undefined) this.options.stats.readIntoBuffers += 1;
    return into;
  }
}
