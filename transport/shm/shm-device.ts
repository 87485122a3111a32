/**
 * The shared-memory device: endpoints of one host, threads of one process and processes alike.
 * Each ordered pair of endpoints has a ring (ring.ts) in the receiver's memory: between threads
 * the process's thread memory (a SharedArrayBuffer the main thread made), between processes the
 * receiver's segment (segments.ts; native/shm.cc maps it into both). A frame goes into the ring as
 * bytes (sending.ts) and the receiver's polling copies it out and delivers it (delivery.ts); a
 * large frame flows through in pieces, and a frame that finds the ring full waits at the sender,
 * in order.
 *
 * Waiting: the engine's progress engine polls this device while a call waits (polling.ts); when
 * it stops, the device sleeps on its doorbells, which a sender rings only when it sleeps
 * (doorbells.ts). A peer process that dies is found by a pid check, without relying on it.
 *
 * This class only puts the parts together: it maps the rings at connect, and each link to a peer
 * is a RingSender and a RingReceiver.
 */
import os from 'node:os';
import type { Device, DeviceHost, DevicePeer, PollingDevice, Releasable } from '../device.js';
import type { Frame } from '../frame.js';
import type { ByteCopy } from '../stream.js';
import { ConfigError, TransportError } from '../../src/base/errors.js';
import { ringCopy } from './copy.js';
import { RingReceiver } from './delivery.js';
import { PeerBell, segmentBell, threadBell, wakeUp } from './doorbells.js';
import { SEGMENT, threadBellIndex, threadRingOffset } from './layout.js';
import type { ThreadMemory } from './layout.js';
import type { ShmNative } from './native.js';
import { Poller } from './polling.js';
import type { RingLink } from './polling.js';
import { Ring } from './ring.js';
import { OwnSegment, PeerSegment, bellPath, processGone, removeStaleSegments, segmentName } from './segments.js';
import { RingSender } from './sending.js';
import type { ShmStats } from './stats.js';

export type { ShmStats };

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

/** A peer endpoint, with the record it published. */
interface ShmPeer {
  readonly rank: number;
  readonly address: ShmAddress;
}

/** What a link to one peer is made of, found at connect. */
interface LinkParts {
  readonly peer: number;
  readonly outgoing: Ring;
  readonly incoming: Ring;
  /** Rings the peer's doorbell if it sleeps. */
  readonly wake: () => void;
  /** The peer's process id, for peers in other processes (checked for life). */
  readonly pid: number | undefined;
  /** Large frames go to the peer by single copy; the process whose memory this end reads them from, if it may. */
  readonly singleCopy: () => boolean;
  readonly fetchFrom: number | undefined;
}

export class ShmDevice implements Device, PollingDevice {
  readonly name = 'shm';
  readonly copyLimit = 64 * 1024;
  readonly address: ShmAddress;
  readonly stats: ShmStats = { ringFull: 0, queuedBytes: 0, queuedHighWater: 0, singleCopies: 0, helpedChunks: 0, lateSenders: 0, safetyWakes: 0, readIntoBuffers: 0 };
  private host: DeviceHost | undefined;
  private readonly links: (RingLink | undefined)[] = [];
  private readonly poller = new Poller(this.stats);
  /** A doorbell rang: counted by the host, then what arrived moves. */
  private readonly rung = (): void => {
    this.host?.wokenUp?.();
    this.poller.woken();
  };
  /** Our ends of the doorbells of peers in other processes, by rank. */
  private readonly peerBells: (PeerBell | undefined)[] = [];
  private segment: OwnSegment | undefined;
  private lifeCheck: NodeJS.Timeout | undefined;
  private readonly copy: ByteCopy;

  constructor(private readonly options: ShmDeviceOptions) {
    this.copy = ringCopy(options.native);
    // Whole frames go through the rings as host-order words, the others as little-endian bytes.
    if (os.endianness() !== 'LE') throw new ConfigError('the shm device needs a little-endian host; use tcp');
    const segment = options.native ? segmentName(options.rank) : undefined;
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
    this.poller.start(this.links.filter((link): link is RingLink => link !== undefined));
  }

  private connectThreads(siblings: readonly ShmPeer[]): void {
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
      const bell = threadBellIndex(them);
      this.links[rank] = this.link({
        peer: rank,
        outgoing: new Ring(memory.buffer, threadRingOffset(threads, capacity, me, them), capacity, this.copy),
        incoming: new Ring(memory.buffer, threadRingOffset(threads, capacity, them, me), capacity, this.copy),
        wake: wakeUp(words, bell, () => Atomics.notify(words, bell)),
        pid: undefined,
        singleCopy: () => fetchFrom !== undefined,
        fetchFrom,
      });
    }
    this.poller.addBell(threadBell(words, threadBellIndex(me), this.rung));
  }

  private async connectProcesses(strangers: readonly ShmPeer[]): Promise<void> {
    const native = this.options.native;
    const name = this.address.segment;
    if (native === undefined || name === undefined) throw new ConfigError('shm between processes needs the shared-memory addon');
    const deadline = Date.now() + this.options.timeoutMs;
    // Our segment: one ring per sender of another process.
    const own = new OwnSegment(native, name, strangers.map((peer) => peer.rank).sort((a, b) => a - b), this.options.ringCapacity);
    this.segment = own;
    // Made before the segment says it is ready: a sender opens it right after mapping the segment.
    this.poller.addBell(segmentBell(native, own.buffer, name, this.rung));
    own.announce();
    try {
      // Theirs: map it, find our ring by our rank in its table, count ourselves in.
      for (const { rank, address } of strangers) {
        if (address.segment === undefined) throw new ConfigError(`endpoint ${rank} has no shm segment (its shared-memory addon is not available)`);
        const theirs = await PeerSegment.map(native, address.segment, rank, deadline);
        const outgoing = theirs.ringFor(this.options.rank, rank, this.copy);
        outgoing.offerProbe(native.probeAddress());
        // Opened before we count ourselves in: once all have, its owner unlinks it with the segment.
        const bell = new PeerBell(native, bellPath(address.segment));
        this.peerBells[rank] = bell;
        theirs.countIn();
        this.links[rank] = this.link({
          peer: rank,
          outgoing,
          incoming: own.ringOf(rank, this.copy),
          wake: wakeUp(theirs.words, SEGMENT.bell, () => bell.ring()),
          pid: address.pid,
          singleCopy: () => outgoing.singleCopy,
          fetchFrom: address.pid,
        });
      }
      // Once every sender has mapped ours, its name can go: nothing is left in /dev/shm, whatever happens later.
      await own.allMapped(deadline, this.options.rank, this.options.timeoutMs);
      // Every sender has said where its probe word is: may we read their memory?
      for (const { rank, address } of strangers) {
        const incoming = (this.links[rank] as RingLink).receiver.ring;
        const probe = incoming.probe;
        incoming.decideSingleCopy(this.options.singleCopy && probe !== undefined && native.canRead(address.pid, probe));
      }
    } finally {
      own.unlink();
    }
    this.lifeCheck = setInterval(() => this.checkLives(), Math.max(50, Math.min(1000, this.options.timeoutMs / 4)));
    this.lifeCheck.unref();
  }

  private link(parts: LinkParts): RingLink {
    const { peer, wake, fetchFrom } = parts;
    const shared = { native: this.options.native, copy: this.copy, stats: this.stats };
    const sender = new RingSender({ ...shared, peer, ring: parts.outgoing, wake, singleCopy: parts.singleCopy, peerProcess: fetchFrom, spins: () => this.host?.spins?.() === true });
    const receiver = new RingReceiver({ ...shared, peer, ring: parts.incoming, wake, fetchFrom, host: () => this.host, releaseFetched: () => sender.releaseFetched() });
    return { peer, pid: parts.pid, sender, receiver };
  }

  lendsTo(peer: number): boolean {
    return this.links[peer]?.sender.lends() === true;
  }

  send(peer: number, frame: Frame, releasable: Releasable | undefined, lend = false): boolean {
    const link = this.links[peer];
    if (link === undefined) throw new TransportError(`shm device of endpoint ${this.options.rank}: no ring to endpoint ${peer}`);
    return link.sender.send(frame, releasable, lend);
  }

  /** Moves everything that arrived into the engine and what waits to go out into the rings; says how much moved. */
  progress(): number {
    return this.poller.progress();
  }

  /** A spin found nothing: sleep until a sender rings. */
  sleep(): void {
    this.poller.arm();
  }

  describe(): string {
    return `shm: ${this.poller.describe()}`;
  }

  /** A peer process that is gone is lost, whatever else knows it. */
  private checkLives(): void {
    for (const link of this.links) {
      if (link?.pid !== undefined && processGone(link.pid)) this.host?.lost(link.peer, new TransportError(`its process (pid ${link.pid}) is gone`));
    }
  }

  disconnect(peer: number): void {
    if (this.links[peer] === undefined) return;
    this.links[peer] = undefined;
    this.peerBells[peer]?.close();
    this.poller.remove(peer);
  }

  async close(): Promise<void> {
    clearInterval(this.lifeCheck);
    await this.poller.close(this.options.timeoutMs);
    for (const bell of this.peerBells) bell?.close();
    this.peerBells.length = 0;
    this.links.length = 0;
    this.host = undefined;
    this.segment?.unlink();
  }
}
