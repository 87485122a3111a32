/**
 * The shared-memory device: endpoints of one host, threads of one process and processes alike.
 * Each ordered pair of endpoints has a ring (ring.ts) in the receiver's memory: between threads
 * the process's thread memory (a SharedArrayBuffer the main thread made), between processes the
 * receiver's segment (native/shm.cc maps it into both). A frame goes into the ring as bytes and
 * the receiver's polling copies it out (transport/stream.ts); a large frame flows through in
 * pieces, and a frame that finds the ring full waits at the sender, in order.
 *
 * Waiting: the engine's progress engine polls this device while a call waits (spinning); when it
 * stops, the device says it sleeps (its doorbell word holds SLEEPING) and blocks without blocking
 * the event loop: Atomics.waitAsync on the thread doorbell, a native waiter thread on the segment's
 * (Atomics.notify does not cross processes). A sender rings only a sleeping receiver, so the fast
 * path makes no system call. Whenever the device was polled it goes back to sleep once the event
 * loop is idle. A peer process that dies is found by a pid check, without relying on it.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { Device, DeviceHost, DevicePeer, Releasable } from '../device.js';
import { copyBodies, FrameType } from '../frame.js';
import type { Frame } from '../frame.js';
import { progressEngine } from '../../src/engine/progress.js';
import type { PollingDevice } from '../../src/engine/progress.js';
import { Queue } from '../../src/engine/matching.js';
import { viewBytes } from '../../src/base/typed-arrays.js';
import { ConfigError, TimeoutError, TransportError } from '../../src/base/errors.js';
import { FrameReader, carriedBytes, prefixBytes, writePrefix } from '../stream.js';
import { RING_ALIGNMENT, Ring } from './ring.js';
import { MemoryFrames, padded, paddedFrameBytes } from '../memory-frames.js';
import { SEGMENT, SEGMENT_MAGIC, segmentBytes, segmentRingOffset, threadBellIndex, threadRingOffset } from './layout.js';
import type { ShmNative } from './native.js';
import { ringCopy } from './copy.js';
import { CopyJob, FLAG_BODIES_AT_SENDER, SINGLE_COPY_BYTES, byReference, fetchBodies, helpCopy } from './single-copy.js';
import type { LentBodies } from './single-copy.js';
import type { ByteCopy } from '../stream.js';
import type { ThreadMemory } from './layout.js';

/** How long an endpoint asleep with output waiting for its peers goes without looking (ms). */
const SAFETY_MS = 10;
const AWAKE = 0;
const SLEEPING = 1;
/**
 * A large frame goes into the ring in pieces of this size, each published as soon as it is in, so
 * that the reader's copy out overlaps the writer's copy in (on two cores, a hop then costs about
 * one copy instead of two).
 */
const PIPELINE_BYTES = 64 * 1024;

export interface ShmDeviceOptions {
  readonly rank: number;
  readonly processRank: number;
  readonly threadRank: number;
  readonly threadCount: number;
  /** Data bytes of each ring in this endpoint's segment (a power of two). */
  readonly ringCapacity: number;
  /** Large frames go by single copy where the receiver may read the sender's memory (single-copy.ts). */
  readonly singleCopy: boolean;
  readonly timeoutMs: number;
  /** The addon, for peers in other processes; undefined: threads of this process only. */
  readonly native: ShmNative | undefined;
  /** This process's thread memory, when its threads were started by ccjs (made once the job's coordinator is known). */
  readonly threads: () => ThreadMemory | undefined;
}

/** The record an endpoint publishes for this device. */
export interface ShmAddress {
  readonly pid: number;
  readonly processRank: number;
  readonly threadRank: number;
  /** The endpoint's segment, for senders in other processes (none without the addon). */
  readonly segment: string | undefined;
}

function parseShmAddress(record: unknown, rank: number): ShmAddress {
  const { pid, processRank, threadRank, segment } = (record ?? {}) as { pid?: unknown; processRank?: unknown; threadRank?: unknown; segment?: unknown };
  // The coordinator's msgpack turns an absent segment into null.
  if (typeof pid !== 'number' || typeof processRank !== 'number' || typeof threadRank !== 'number' || (segment !== undefined && segment !== null && typeof segment !== 'string')) {
    throw new ConfigError(`endpoint ${rank} published no usable shm address (${JSON.stringify(record)})`);
  }
  return { pid, processRank, threadRank, segment: typeof segment === 'string' ? segment : undefined };
}

/** Counters a test or a benchmark may read. */
export interface ShmStats {
  /** Times a frame found its ring full and waited at this sender. */
  ringFull: number;
  /** Bytes of frames waiting at this sender for ring room, now, and the most that ever were. */
  queuedBytes: number;
  queuedHighWater: number;
  /** Frames this sender had the receiver read from its memory (single copy). */
  singleCopies: number;
  /** Chunks of such frames this sender copied itself, helping its receiver. */
  helpedChunks: number;
  /** Times a sender was late with a chunk it claimed, and this receiver copied the whole body itself. */
  lateSenders: number;
  /** Times the safety timer found this endpoint asleep with output waiting for a peer, and polled. */
  safetyWakes: number;
  /** Bodies this receiver read from a sender's memory straight into the buffer its receive gave (`into`). */
  readIntoBuffers: number;
}

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

/** This endpoint and one peer: the ring it writes into, the ring it reads from, and how to wake the peer. */
class Link {
  readonly outbox = new Queue<Outgoing>();
  /** Frames the peer reads from our memory (single copy), oldest first: released once it counts them fetched. */
  readonly awaitingFetch = new Queue<LentBodies>();
  /** How many of our frames the peer had fetched when we last looked. */
  fetchesSeen = 0;
  /** The copy jobs the peer offers us (in our outgoing ring), and those we offer it (in the incoming one). */
  readonly theirJobs: CopyJob;
  readonly ourJobs: CopyJob;
  /** We copy chunks of the peer's jobs (until writing its memory fails once). */
  helps = true;
  /** Whole frames, in place in the rings; the stream reader and writer take frames that wrap. */
  readonly writer: MemoryFrames;
  private readonly frames: MemoryFrames;
  private readonly reader: FrameReader;
  readonly read: (data: Buffer, start: number, end: number) => void;

  constructor(
    readonly peer: number,
    readonly outgoing: Ring,
    readonly incoming: Ring,
    /** Rings the peer's doorbell if it sleeps. */
    readonly wake: () => void,
    /** The peer's process id, for peers in other processes (checked for life). */
    readonly pid: number | undefined,
    /** Large frames go to the peer by single copy; the process whose memory this end reads them from, if it may. */
    readonly singleCopy: () => boolean,
    readonly fetchFrom: number | undefined,
    copy: ByteCopy,
    deliver: (frame: Frame) => void,
    lateSender: () => void,
  ) {
    this.writer = new MemoryFrames(outgoing.buffer, outgoing.dataOffset, outgoing.capacity, copy);
    this.theirJobs = new CopyJob(outgoing.jobWords);
    this.ourJobs = new CopyJob(incoming.jobWords, lateSender);
    this.frames = new MemoryFrames(incoming.buffer, incoming.dataOffset, incoming.capacity, copy);
    this.reader = new FrameReader({ frame: deliver, hello: () => undefined }, RING_ALIGNMENT, copy);
    this.read = (data, start, end) => {
      let at = start;
      if (this.reader.idle) {
        for (let used = this.frames.read(at, end, deliver); used > 0; used = at < end ? this.frames.read(at, end, deliver) : 0) at += used;
      }
      if (at < end) this.reader.feed(data, at, end);
    };
  }
}

/** Where POSIX shared-memory names live (shm_open's directory on Linux). */
const SHM_DIRECTORY = '/dev/shm';

/**
 * Where the doorbell of the segment `name` (a POSIX shm name, "/ccjs-...") lies: beside it in
 * /dev/shm, so that whatever removes the job's segments removes it too.
 */
function bellPath(name: string): string {
  return `${SHM_DIRECTORY}${name}.bell`;
}

/** Our end of a peer process's doorbell; once closed it never writes again (its descriptor number may be reused). */
class PeerBell {
  private fd: number;

  constructor(
    private readonly native: ShmNative,
    path: string,
  ) {
    this.fd = native.openBell(path);
  }

  ring(): void {
    if (this.fd >= 0) this.native.ringBell(this.fd);
  }

  close(): void {
    if (this.fd < 0) return;
    this.native.closeBell(this.fd);
    this.fd = -1;
  }
}

/** A doorbell word this endpoint sleeps on, and how it blocks on it. */
interface Bell {
  readonly words: Int32Array;
  readonly index: number;
  /** Blocks (without blocking the event loop) until rung, then calls woken(); at most one block at a time. */
  block(): void;
  close(): void;
}

export class ShmDevice implements Device, PollingDevice {
  readonly name = 'shm';
  readonly copyLimit = 64 * 1024;
  readonly address: ShmAddress;
  readonly stats: ShmStats = { ringFull: 0, queuedBytes: 0, queuedHighWater: 0, singleCopies: 0, helpedChunks: 0, lateSenders: 0, safetyWakes: 0, readIntoBuffers: 0 };
  private host: DeviceHost | undefined;
  private readonly links: (Link | undefined)[] = [];
  private active: Link[] = [];
  private readonly bells: Bell[] = [];
  /** Our ends of the doorbells of peers in other processes, by rank. */
  private readonly peerBells: (PeerBell | undefined)[] = [];
  private armed = false;
  private rearmScheduled = false;
  private polling = false;
  private segmentName: string | undefined;
  private unlinked = true;
  private lifeCheck: NodeJS.Timeout | undefined;
  private safety: NodeJS.Timeout | undefined;
  private delivered = 0;
  private readonly copy: ByteCopy;
  private readonly lateSender = () => {
    this.stats.lateSenders += 1;
  };

  constructor(private readonly options: ShmDeviceOptions) {
    this.copy = ringCopy(options.native);
    // Whole frames go through the rings as host-order words, the others as little-endian bytes.
    if (os.endianness() !== 'LE') throw new ConfigError('the shm device needs a little-endian host; use tcp');
    const segment = options.native ? `/ccjs-${process.pid}-${Math.random().toString(36).slice(2, 10)}-${options.rank}` : undefined;
    this.address = { pid: process.pid, processRank: options.processRank, threadRank: options.threadRank, segment };
    if (options.native) removeStaleSegments();
  }

  /** Maps the rings of every peer; between processes through segments that are unlinked once all have mapped them. */
  async connect(peers: readonly DevicePeer[], host: DeviceHost): Promise<void> {
    if (peers.length === 0) return;
    this.host = host;
    const others = peers.map((peer) => ({ rank: peer.rank, address: parseShmAddress(peer.address, peer.rank) }));
    const siblings = others.filter((peer) => peer.address.processRank === this.options.processRank);
    const strangers = others.filter((peer) => peer.address.processRank !== this.options.processRank);
    if (siblings.length > 0) this.connectThreads(siblings);
    if (strangers.length > 0) await this.connectProcesses(strangers);
    this.active = this.links.filter((link): link is Link => link !== undefined);
    progressEngine.register(this);
    this.arm();
  }

  private connectThreads(siblings: readonly { rank: number; address: ShmAddress }[]): void {
    const memory = this.options.threads();
    if (memory === undefined) throw new ConfigError(`shm between threads of process ${this.options.processRank}: these threads were not started by ccjs (threads option or CCJS_THREADS), so they share no ring memory`);
    const threads = this.options.threadCount;
    const capacity = memory.ringCapacity;
    const words = new Int32Array(memory.buffer);
    const me = this.options.threadRank;
    // Threads of one process read each other's memory as their own (the addon copies with memcpy).
    const fetchFrom = this.options.native !== undefined && this.options.singleCopy ? process.pid : undefined;
    for (const { rank, address } of siblings) {
      const them = address.threadRank;
      const outgoing = new Ring(memory.buffer, threadRingOffset(threads, capacity, me, them), capacity, this.copy);
      const incoming = new Ring(memory.buffer, threadRingOffset(threads, capacity, them, me), capacity, this.copy);
      const bell = threadBellIndex(them);
      const wake = () => {
        if (Atomics.load(words, bell) === SLEEPING && Atomics.compareExchange(words, bell, SLEEPING, AWAKE) === SLEEPING) Atomics.notify(words, bell);
      };
      const link: Link = new Link(rank, outgoing, incoming, wake, undefined, () => fetchFrom !== undefined, fetchFrom, this.copy, (frame) => this.arrived(link, frame), this.lateSender);
      this.links[rank] = link;
    }
    this.bells.push(this.threadBell(words, threadBellIndex(me)));
  }

  private threadBell(words: Int32Array, index: number): Bell {
    let blocked = false;
    let closed = false;
    return {
      words,
      index,
      block: () => {
        if (blocked || closed) return;
        const wait = Atomics.waitAsync(words, index, SLEEPING);
        if (!wait.async) {
          // A sender rang between our last look and now: look again, without recursing into arm().
          queueMicrotask(() => this.woken());
          return;
        }
        blocked = true;
        void wait.value.then(() => {
          blocked = false;
          if (!closed) this.woken();
        });
      },
      close: () => {
        closed = true;
        // Lets an outstanding wait end (it finds the device closed).
        Atomics.notify(words, index);
      },
    };
  }

  private async connectProcesses(strangers: readonly { rank: number; address: ShmAddress }[]): Promise<void> {
    const native = this.options.native;
    const name = this.address.segment;
    if (native === undefined || name === undefined) throw new ConfigError('shm between processes needs the shared-memory addon');
    const capacity = this.options.ringCapacity;
    const senders = strangers.map((peer) => peer.rank).sort((a, b) => a - b);
    const deadline = Date.now() + this.options.timeoutMs;
    // Our segment: one ring per sender of another process.
    const own = native.open(name, segmentBytes(senders.length, capacity), true);
    this.segmentName = name;
    this.unlinked = false;
    // Should this process end before every sender has mapped it, the names go with it.
    const unlinkAtExit = () => this.unlink();
    process.once('exit', unlinkAtExit);
    // Made before the segment says it is ready: a sender opens it right after mapping the segment.
    this.bells.push(this.segmentBell(native, own, name));
    const ownWords = new Int32Array(own);
    senders.forEach((rank, index) => (ownWords[SEGMENT.ranks + index] = rank));
    ownWords[SEGMENT.senders] = senders.length;
    ownWords[SEGMENT.capacity] = capacity;
    ownWords[SEGMENT.magic] = SEGMENT_MAGIC;
    Atomics.store(ownWords, SEGMENT.ready, 1);
    try {
      // Theirs: map it, find our ring by our rank in its table, count ourselves in.
      for (const { rank, address } of strangers) {
        if (address.segment === undefined) throw new ConfigError(`endpoint ${rank} has no shm segment (its shared-memory addon is not available)`);
        const theirs = await openWhenReady(native, address.segment, deadline, rank);
        const theirWords = new Int32Array(theirs);
        const theirSenders = theirWords[SEGMENT.senders] as number;
        const theirCapacity = theirWords[SEGMENT.capacity] as number;
        const index = Array.from(theirWords.subarray(SEGMENT.ranks, SEGMENT.ranks + theirSenders)).indexOf(this.options.rank);
        if (index < 0) throw new TransportError(`endpoint ${rank}'s shm segment has no ring for endpoint ${this.options.rank}: the endpoints disagree on which pairs use shm (give them the same configuration)`);
        const outgoing = new Ring(theirs, segmentRingOffset(theirSenders, theirCapacity, index), theirCapacity, this.copy);
        const incoming = new Ring(own, segmentRingOffset(senders.length, capacity, senders.indexOf(rank)), capacity, this.copy);
        outgoing.offerProbe(native.probeAddress());
        // Opened before we count ourselves in: once all have, its owner unlinks it with the segment.
        const bell = new PeerBell(native, bellPath(address.segment));
        this.peerBells[rank] = bell;
        Atomics.add(theirWords, SEGMENT.mapped, 1);
        const wake = () => {
          if (Atomics.load(theirWords, SEGMENT.bell) === SLEEPING && Atomics.compareExchange(theirWords, SEGMENT.bell, SLEEPING, AWAKE) === SLEEPING) bell.ring();
        };
        const link: Link = new Link(rank, outgoing, incoming, wake, address.pid, () => outgoing.singleCopy, address.pid, this.copy, (frame) => this.arrived(link, frame), this.lateSender);
        this.links[rank] = link;
      }
      // Once every sender has mapped ours, its name can go: nothing is left in /dev/shm, whatever happens later.
      while (Atomics.load(ownWords, SEGMENT.mapped) < senders.length) {
        if (Date.now() > deadline) {
          throw new TimeoutError(`shm device of endpoint ${this.options.rank}: ${senders.length - Atomics.load(ownWords, SEGMENT.mapped)} of its senders did not map its segment within ${this.options.timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      // Every sender has said where its probe word is: may we read their memory?
      for (const { rank, address } of strangers) {
        const incoming = (this.links[rank] as Link).incoming;
        const probe = incoming.probe;
        incoming.decideSingleCopy(this.options.singleCopy && probe !== undefined && native.canRead(address.pid, probe));
      }
    } finally {
      this.unlink();
      process.off('exit', unlinkAtExit);
    }
    this.lifeCheck = setInterval(() => this.checkLives(), Math.max(50, Math.min(1000, this.options.timeoutMs / 4)));
    this.lifeCheck.unref();
  }

  private segmentBell(native: ShmNative, segment: SharedArrayBuffer, name: string): Bell {
    let blocked = false;
    const doorbell = new native.Doorbell(bellPath(name), () => {
      blocked = false;
      this.woken();
    });
    return {
      words: new Int32Array(segment),
      index: SEGMENT.bell,
      block: () => {
        if (blocked) return;
        blocked = true;
        doorbell.arm();
      },
      close: () => doorbell.close(),
    };
  }

  lendsTo(peer: number): boolean {
    return this.links[peer]?.singleCopy() === true;
  }

  send(peer: number, frame: Frame, releasable: Releasable | undefined, lend = false): boolean {
    const link = this.links[peer];
    if (link === undefined) throw new TransportError(`shm device of endpoint ${this.options.rank}: no ring to endpoint ${peer}`);
    if (lend && releasable !== undefined && carriedBytes(frame) > SINGLE_COPY_BYTES && link.singleCopy()) {
      // The peer reads the bodies from where they are when the frame arrives, and they are ours
      // again once it counts them fetched. (Only where the engine says the sender may wait that
      // long: a sendAsync goes on at once, and would otherwise wait for a peer busy computing.)
      const { stand, lent } = byReference(frame, releasable, this.options.native as ShmNative);
      this.send(peer, stand, undefined);
      link.awaitingFetch.push(lent);
      this.stats.singleCopies += 1;
      return false;
    }
    if (link.outbox.length === 0 && this.writeWhole(link, frame)) {
      link.outgoing.publish();
      link.wake();
      return true;
    }
    const outgoing = new Outgoing(frame, undefined);
    link.outbox.push(outgoing);
    this.stats.queuedBytes += carriedBytes(frame);
    this.stats.queuedHighWater = Math.max(this.stats.queuedHighWater, this.stats.queuedBytes);
    this.flush(link);
    if (outgoing.done) return true;
    if (releasable === undefined) {
      // The caller may reuse its buffers now: the rest goes out of copies.
      copyBodies(frame);
      return true;
    }
    outgoing.releasable = releasable;
    return false;
  }

  /** Writes a frame whole, if the ring has room for all of it now. */
  private writeWhole(link: Link, frame: Frame): boolean {
    const ring = link.outgoing;
    const total = paddedFrameBytes(frame);
    if (ring.room(total) < total) return false;
    const at = ring.reserve(total);
    if (at >= 0) {
      link.writer.write(at, frame);
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

  /** Writes as much of the link's queue as the ring takes, in order; makes it visible and wakes the peer. */
  private flush(link: Link): void {
    const ring = link.outgoing;
    while (link.outbox.length > 0) {
      const item = link.outbox.at(0);
      const whole = item.stage === 0 && item.offset === 0 && this.writeWhole(link, item.frame);
      if (!whole && !this.writeSome(ring, item)) {
        // Full: tell the reader, then look again in case it made room in between.
        this.stats.ringFull += 1;
        ring.setProducerWaiting(true);
        if (ring.room() === 0) break;
        ring.setProducerWaiting(false);
        continue;
      }
      link.outbox.shift();
      this.stats.queuedBytes -= carriedBytes(item.frame);
      item.done = true;
      item.releasable?.released();
    }
    ring.publish();
    link.wake();
  }

  /** Streams a frame into the ring, piece by piece; true once all of it is in, false when the ring is full. */
  private writeSome(ring: Ring, item: Outgoing): boolean {
    const { frame } = item;
    const bodies = frame.bodies.length;
    const unpadded = prefixBytes(frame) + carriedBytes(frame);
    while (item.stage <= bodies + 1) {
      let source: Uint8Array | undefined;
      if (item.stage === 0) {
        if (item.prefix === undefined) {
          item.prefix = Buffer.allocUnsafe(prefixBytes(frame));
          writePrefix(item.prefix, 0, frame);
        }
        source = item.prefix;
      } else if (item.stage <= bodies) {
        source = viewBytes(frame.bodies[item.stage - 1] as ArrayBufferView);
      }
      const length = source === undefined ? padded(unpadded) - unpadded : source.byteLength;
      const remaining = length - item.offset;
      if (remaining > 0) {
        const take = Math.min(ring.room(remaining), remaining, PIPELINE_BYTES);
        if (take === 0) return false;
        if (source !== undefined) ring.put(source.subarray(item.offset, item.offset + take));
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

  /** Moves everything that arrived into the engine and what waits to go out into the rings; says how much moved. */
  progress(): number {
    if (this.polling) return 0;
    this.polling = true;
    this.delivered = 0;
    try {
      if (this.armed) this.disarm();
      let moved = 0;
      for (let i = 0; i < this.active.length; i += 1) {
        const link = this.active[i] as Link;
        if (link.incoming.consume(link.read) > 0) moved += 1;
        if (link.incoming.release()) link.wake();
        if (link.awaitingFetch.length > 0) {
          moved += this.releaseFetched(link);
          // Waiting here anyway, and a core of our own: copy our part of what the peer fetches.
          if (link.helps && link.awaitingFetch.length > 0 && progressEngine.spinning) moved += this.help(link);
        }
        if (link.outbox.length > 0) {
          const queued = link.outgoing.written;
          this.flush(link);
          if (link.outgoing.written !== queued) moved += 1;
        }
      }
      return this.delivered + moved;
    } finally {
      this.polling = false;
    }
  }

  /** Releases the bodies of our frames the peer has fetched since we last looked; returns how many. */
  private releaseFetched(link: Link): number {
    const fetched = link.outgoing.fetched;
    const count = Math.min((fetched - link.fetchesSeen) >>> 0, link.awaitingFetch.length);
    link.fetchesSeen = fetched;
    for (let i = 0; i < count; i += 1) (link.awaitingFetch.shift() as LentBodies).releasable.released();
    return count;
  }

  /** Copies chunks of the job the peer offers for bodies we lend it; stops helping a peer whose memory we may not write. */
  private help(link: Link): number {
    try {
      const chunks = helpCopy(link.theirJobs, link.awaitingFetch, link.fetchFrom as number, this.options.native as ShmNative);
      this.stats.helpedChunks += chunks;
      return chunks;
    } catch {
      link.helps = false;
      return 0;
    }
  }

  describe(): string {
    const bells = this.bells.map((bell) => Atomics.load(bell.words, bell.index)).join('/');
    const links = this.active.map((link) => `to ${link.peer}: ${link.outgoing.describe()}, ${link.outbox.length} queued, ${link.awaitingFetch.length} awaiting fetch; from ${link.peer}: ${link.incoming.describe()}`);
    return `shm: ${this.armed ? 'armed' : 'awake'}${this.rearmScheduled ? ' (rearm scheduled)' : ''}, bells ${bells}, safety wakes ${this.stats.safetyWakes}; ${links.join('; ')}`;
  }

  /** A spin found nothing: sleep until a sender rings. */
  sleep(): void {
    this.arm();
  }

  /** Where the receive of `frame` wants its body, if anywhere (counted: the body is read there). */
  private destinationFor(peer: number, frame: Frame, format: number, bytes: number): Uint8Array | undefined {
    const into = this.host?.destinationFor?.(peer, frame, format, bytes);
    if (into !== undefined) this.stats.readIntoBuffers += 1;
    return into;
  }

  private arrived(link: Link, frame: Frame): void {
    const peer = link.peer;
    // A peer that closes counted what it fetched from us before it wrote its Goodbye: those sends are done, not lost.
    if (frame.type === FrameType.Goodbye) this.releaseFetched(link);
    if ((frame.flags & FLAG_BODIES_AT_SENDER) !== 0) {
      try {
        fetchBodies(frame, link.fetchFrom ?? -1, this.options.native as ShmNative, link.ourJobs, (format, bytes) => this.destinationFor(peer, frame, format, bytes));
      } catch (error) {
        // The sender is gone (or no longer readable): what it sent cannot be had.
        this.host?.lost(peer, error as Error);
        return;
      }
      link.incoming.countFetched();
      link.wake();
    }
    this.delivered += 1;
    this.host?.deliver(peer, frame);
    // The peer closed on purpose (the engine saw its Goodbye first): its rings go silent.
    if (frame.type === FrameType.Goodbye) this.host?.lost(peer, new TransportError('closed'));
  }

  /** Stops sleeping while polled; goes back to sleep when the event loop is next idle. */
  private disarm(): void {
    this.armed = false;
    for (const bell of this.bells) Atomics.store(bell.words, bell.index, AWAKE);
    this.scheduleRearm();
  }

  private scheduleRearm(): void {
    if (this.rearmScheduled) return;
    this.rearmScheduled = true;
    setImmediate(() => {
      this.rearmScheduled = false;
      if (!this.armed) this.arm();
    });
  }

  /**
   * Says it sleeps, looks once more (a sender may have written, or a reader made room for our
   * queued output, just before), then blocks.
   */
  private arm(): void {
    if (this.host === undefined) return;
    // Asked to sleep from inside a poll (a frame delivered made a call wait): the poll cannot look
    // again from here, and a device marked asleep but not blocked would never hear its doorbell.
    if (this.polling) {
      this.scheduleRearm();
      return;
    }
    this.armed = true;
    // What was read is freed first: a sender waiting for that room must not wait for our sleep to end.
    for (const link of this.active) if (link.incoming.release(true)) link.wake();
    for (const bell of this.bells) Atomics.store(bell.words, bell.index, SLEEPING);
    if (this.active.some((link) => link.incoming.hasData() || (link.outbox.length > 0 && link.outgoing.room(1) > 0) || (link.awaitingFetch.length > 0 && link.outgoing.fetched !== link.fetchesSeen))) {
      this.woken();
      return;
    }
    for (const bell of this.bells) bell.block();
    if (this.waitsForPeers()) this.startSafety();
  }

  /** Output queued for full rings, or bodies peers are still to read: only the peers' rings wake us. */
  private waitsForPeers(): boolean {
    return this.active.some((link) => link.outbox.length > 0 || link.awaitingFetch.length > 0);
  }

  /**
   * While asleep with output waiting for peers, polls now and then. Once, with spinning off
   * (namespace hosts sharing 2 cores), a wake-up seemed lost: a root's frames stayed queued behind
   * a ring its reader had emptied, its doorbell word said the reader had rung, its doorbell was
   * armed, and no call came (the job hung). That was not seen again under instrumentation: every
   * ring reached the doorbell, though some callbacks came milliseconds late (a woken process
   * waiting for a core). Either way the wait is bounded by SAFETY_MS. Counted in stats.safetyWakes.
   */
  private startSafety(): void {
    if (this.safety !== undefined) return;
    this.safety = setTimeout(() => {
      this.safety = undefined;
      if (!this.armed || !this.waitsForPeers()) return;
      this.stats.safetyWakes += 1;
      this.woken();
    }, SAFETY_MS);
    this.safety.unref();
  }

  /** A doorbell rang (or data was found while arming). */
  private woken(): void {
    this.progress();
    if (!this.armed && !this.rearmScheduled) this.arm();
  }

  /** A peer process that is gone is lost, whatever else knows it. */
  private checkLives(): void {
    for (const link of this.active) {
      if (link.pid === undefined) continue;
      try {
        process.kill(link.pid, 0);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ESRCH') this.host?.lost(link.peer, new TransportError(`its process (pid ${link.pid}) is gone`));
      }
    }
  }

  disconnect(peer: number): void {
    if (this.links[peer] === undefined) return;
    this.links[peer] = undefined;
    this.peerBells[peer]?.close();
    this.active = this.active.filter((link) => link.peer !== peer);
  }

  async close(): Promise<void> {
    clearInterval(this.lifeCheck);
    clearTimeout(this.safety);
    progressEngine.unregister(this);
    // Data still queued for the rings goes out first (its senders returned long ago), and peers
    // still to read bodies from our memory get to.
    const deadline = Date.now() + this.options.timeoutMs;
    while (this.active.some((link) => link.outbox.length > 0 || link.awaitingFetch.length > 0) && Date.now() < deadline) {
      this.progress();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    for (const bell of this.bells) bell.close();
    this.bells.length = 0;
    for (const bell of this.peerBells) bell?.close();
    this.peerBells.length = 0;
    this.active = [];
    this.links.length = 0;
    this.host = undefined;
    this.unlink();
  }

  private unlink(): void {
    if (this.unlinked || this.segmentName === undefined) return;
    this.unlinked = true;
    this.options.native?.unlink(this.segmentName);
    fs.rmSync(bellPath(this.segmentName), { force: true });
  }
}

/** A segment's name in /dev/shm, or its doorbell's. */
const SEGMENT_NAME = /^ccjs-(\d+)-[a-z0-9]+-\d+(\.bell)?$/;

/**
 * Unlinks segments of ccjs processes that are gone (killed while their job was starting, before
 * their segment could be unlinked): /dev/shm keeps nothing of a finished job.
 */
function removeStaleSegments(): void {
  let names: string[];
  try {
    names = fs.readdirSync(SHM_DIRECTORY);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(SEGMENT_NAME.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') fs.rmSync(`${SHM_DIRECTORY}/${name}`, { force: true });
    }
  }
}

/** Maps a peer's segment once its creator has made and filled it (retrying until `deadline`). */
async function openWhenReady(native: ShmNative, name: string, deadline: number, rank: number): Promise<SharedArrayBuffer> {
  for (;;) {
    try {
      const buffer = native.open(name, 0, false);
      const words = new Int32Array(buffer);
      if (words[SEGMENT.magic] === SEGMENT_MAGIC && Atomics.load(words, SEGMENT.ready) === 1) return buffer;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new TransportError(`cannot map endpoint ${rank}'s shm segment ${name}: ${(error as Error).message}`, { cause: error });
    }
    if (Date.now() > deadline) throw new TimeoutError(`endpoint ${rank}'s shm segment ${name} did not appear within the timeout`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
