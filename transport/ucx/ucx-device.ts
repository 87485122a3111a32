/**
 * The UCX device: InfiniBand, RoCE, shared memory or TCP, whichever UCX finds (UCX_TLS chooses), for
 * endpoints on different hosts (or any pair, when configured). Each endpoint has a UCP worker
 * (native/ucx.cc); a small frame travels as one tagged message, a large one as a message per part
 * (header, then each body), and UCX picks eager or rendezvous for each. The smallest frames pass
 * between this device and the addon through an outbox and an inbox (memory-frames.ts's layout), so
 * that a message costs no object and no array on the way. Frames from one peer are handed to the
 * engine in the order they were sent.
 *
 * A receive's own buffer (receive's `into`) takes its body straight from UCX: the engine names it
 * when it clears a rendezvous (receiveInto), or the device asks for it (DeviceHost.destinationFor)
 * once it has read the header of a point-to-point message that came without asking, whose body
 * UCX holds until then.
 *
 * Waiting: the engine's progress engine polls this device while a call waits (the engine registers
 * it once connected, see PollingDevice); when it stops, the worker's event fd is armed and libuv
 * wakes the device (or, while messages are in flight, the event loop polls it). A lost peer is
 * reported by UCX (peer error handling, with a short keepalive so that a silent death is found
 * within about a second); a timer progresses the worker now and then so that keepalives flow
 * while nothing else happens.
 *
 * Listening: UCX's TCP transport listens on each network interface UCX is given, and UCX lets
 * whoever connects there take part in its wire-up, with nothing ccjs could check (UCX has no hook
 * for it, and a message's tag, which names its sender, is not proof of who sent it). So UCX gets the
 * job's interface only (net-devices.ts), and the job opens this device only where a pair uses it
 * (src/runtime/devices.ts); docs/API.md (Security) says what that leaves open.
 */
import type { Device, DeviceHost, DevicePeer, PollingDevice, Releasable } from '../device.js';
import { FrameType, asFrameError, carriesOneBinary } from '../frame.js';
import type { Frame } from '../frame.js';
import { ConfigError, TimeoutError, TransportError } from '../../src/base/errors.js';
import { MemoryFrames, padded } from '../memory-frames.js';
import { setCopy } from '../stream.js';
import { checkSum, lengthBeforeSum, messageBytes, messageParts, readMessage, wholeMessage } from './frames.js';
import { netDevicesFor } from './net-devices.js';
import { RECORDS_AT, RECORD_BYTES, RecordKind } from './native.js';
import type { HeldPart, UcxNative, UcxWorker } from './native.js';

/** How often the worker is progressed while nothing else does it (keepalives, missed wake-ups). */
const SAFETY_PROGRESS_MS = 100;

/** Records the inbox holds at least, each with a frame of the largest size that passes through it. */
const INBOX_RECORDS = 32;

/** UCX transports that move bytes through memory; a pair on one host without any runs slower than it should. */
const MEMORY_TRANSPORTS = ['posix', 'sysv', 'cma', 'knem', 'xpmem', 'self'];

export interface UcxDeviceOptions {
  readonly rank: number;
  /** This endpoint's host identity (endpoints with the same one share memory). */
  readonly host: string;
  /** The address the job listens on: UCX's network transports use only its interface (and RDMA ports), unless UCX_NET_DEVICES says otherwise. */
  readonly listenHost: string;
  readonly timeoutMs: number;
  readonly native: UcxNative;
  /** Where the lanes of each peer are told (CCJS_TRACE), if anywhere. */
  readonly trace: ((line: string) => void) | undefined;
  /** Every frame carries a CRC32C of its bytes, and one whose bytes changed is refused (config `checksum`; every endpoint must agree). */
  readonly checksum?: boolean;
}

/** The record an endpoint publishes for this device. */
export interface UcxAddress {
  /** The worker's address, base64. */
  readonly worker: string;
  readonly host: string;
}

function parseUcxAddress(record: unknown, rank: number): UcxAddress {
  const { worker, host } = (record ?? {}) as { worker?: unknown; host?: unknown };
  if (typeof worker !== 'string' || typeof host !== 'string') throw new ConfigError(`endpoint ${rank} published no usable ucx address (${JSON.stringify(record)})`);
  return { worker, host };
}

/** UCX_TLS names that include every shared-memory transport. */
const MEMORY_ALIASES = ['all', 'sm', 'shm', 'mm'];

/** Whether UCX_TLS lets UCX use the shared-memory transport `transport`. */
function allowed(transport: string): boolean {
  const list = (process.env.UCX_TLS ?? 'all').split(',').map((entry) => entry.trim());
  if (list[0]?.startsWith('^')) return !list.some((entry) => entry.replace(/^\^/, '') === transport);
  return list.some((entry) => entry === transport || MEMORY_ALIASES.includes(entry));
}

/** UCX's defaults tuned for ccjs, unless the user set them: a lost peer found within about a second, also over shared memory. */
function setUcxDefaults(): void {
  process.env.UCX_KEEPALIVE_INTERVAL ??= '1s';
  // Peer error handling otherwise moves shared-memory pairs onto TCP without a word. (Set only
  // for transports UCX_TLS allows: UCX warns of variables no transport reads.)
  for (const transport of ['posix', 'sysv']) {
    if (allowed(transport)) process.env[`UCX_${transport.toUpperCase()}_ERROR_HANDLING`] ??= 'y';
  }
}

/** The transports of each lane in UCX's description of an endpoint ("lane[0]:  3:posix/memory.0 ..."). */
export function laneTransports(description: string): string[] {
  const transports = new Set<string>();
  for (const match of description.matchAll(/lane\[\d+\]:\s+\d+:([\w-]+)\//g)) transports.add(match[1] as string);
  return [...transports];
}

/** What a UCX device counts. */
export interface UcxStats {
  /** Bodies UCX received straight into the buffer their receive gave (receive's `into`). */
  receivedIntoBuffers: number;
}

export class UcxDevice implements Device, PollingDevice {
  readonly name = 'ucx';
  readonly copyLimit = 64 * 1024;
  readonly address: UcxAddress;
  readonly stats: UcxStats = { receivedIntoBuffers: 0 };
  private readonly worker: UcxWorker;
  private host: DeviceHost | undefined;
  private readonly peers = new Set<number>();
  /** Sends UCX still reads from, by token; large ones with the engine's releasable. */
  private readonly inFlight = new Map<number, Releasable | undefined>();
  private nextToken = 0;
  private polling = false;
  private pollScheduled = false;
  private closed = false;
  private safety: NodeJS.Timeout | undefined;
  /** Told of each peer's wireup message (an empty one, unlike any frame) while connect waits for them. */
  private wireupFrom: ((peer: number) => void) | undefined;
  /** Frames up to this size go through the outbox (none with the checksum on: they go whole, with their CRC). */
  private readonly inlineBytes: number;
  private readonly checksum: boolean;
  private readonly outbox: MemoryFrames;
  private readonly inbox: MemoryFrames;
  private readonly inboxBytes: Uint8Array;
  private readonly inboxWords: Uint32Array;
  /** The peer whose frame the inbox is being read for. */
  private from = 0;
  private readonly deliverFrom = (frame: Frame): void => this.deliver(this.from, frame);

  constructor(private readonly options: UcxDeviceOptions) {
    setUcxDefaults();
    this.checksum = options.checksum === true;
    this.inlineBytes = this.checksum ? 0 : options.native.inlineBytes;
    const inbox = new ArrayBuffer(RECORDS_AT + INBOX_RECORDS * (RECORD_BYTES + options.native.inlineBytes));
    const outbox = new ArrayBuffer(options.native.inlineBytes);
    this.inbox = new MemoryFrames(inbox, 0, inbox.byteLength, setCopy, (format) => this.host?.mayPoolBodies?.(format) === true);
    this.inboxWords = new Uint32Array(inbox);
    this.inboxBytes = new Uint8Array(inbox);
    this.outbox = new MemoryFrames(outbox, 0, outbox.byteLength, setCopy);
    const netDevices = process.env.UCX_NET_DEVICES === undefined ? netDevicesFor(options.listenHost) : undefined;
    this.worker = new options.native.UcxWorker(options.rank, () => this.rung(), inbox, outbox, netDevices === undefined ? {} : { NET_DEVICES: netDevices });
    this.address = { worker: Buffer.from(this.worker.address()).toString('base64'), host: options.host };
  }

  async connect(peers: readonly DevicePeer[], host: DeviceHost): Promise<void> {
    if (peers.length === 0) return;
    this.host = host;
    for (const peer of peers) {
      const address = parseUcxAddress(peer.address, peer.rank);
      this.worker.connect(peer.rank, Buffer.from(address.worker, 'base64'));
      this.peers.add(peer.rank);
      this.tellLanes(peer.rank, address.host === this.options.host);
    }
    const reached = this.awaitWireup(peers.map((peer) => peer.rank));
    for (const peer of this.peers) this.worker.sendOut(peer, 0);
    this.safety = setInterval(() => this.advance(true), SAFETY_PROGRESS_MS);
    this.safety.unref();
    this.worker.arm();
    await reached;
  }

  /**
   * Resolves once every peer has said it reached this endpoint (TimeoutError naming the others):
   * connecting to a worker over shared memory attaches to the peer's segment, so a peer must not
   * finish and take it away while this endpoint still connects, as TCP's connect waits for every link.
   */
  private awaitWireup(peers: readonly number[]): Promise<void> {
    const waiting = new Set(peers);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new TimeoutError(`ucx device of endpoint ${this.options.rank}: endpoint(s) ${[...waiting].join(', ')} did not connect within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
      this.wireupFrom = (peer) => {
        waiting.delete(peer);
        if (waiting.size > 0) return;
        clearTimeout(timer);
        this.wireupFrom = undefined;
        resolve();
      };
    });
  }

  /** Says which transports carry each peer (CCJS_TRACE), and warns of a pair on one host that UCX put on the network. */
  private tellLanes(peer: number, sameHost: boolean): void {
    const transports = laneTransports(this.worker.lanes(peer) ?? '');
    this.options.trace?.(`ccjs trace: ucx endpoint ${this.options.rank} → endpoint ${peer}: lanes on ${transports.join(', ') || 'nothing yet'}`);
    const memoryAllowed = MEMORY_TRANSPORTS.some(allowed);
    if (sameHost && memoryAllowed && transports.length > 0 && !transports.some((transport) => MEMORY_TRANSPORTS.includes(transport))) {
      process.stderr.write(`ccjs: warning: endpoints ${this.options.rank} and ${peer} share a host, but UCX carries them on ${transports.join(', ')}, not shared memory (UCX_TLS=${process.env.UCX_TLS ?? 'all'})\n`);
    }
  }

  /**
   * A large message stays in our memory until UCX has moved it, and the peer's addon takes every
   * message as it arrives (probe, then receive), matched or not: it is read from here on arrival,
   * as shm's single copy is. (UCX's own rendezvous does the reading.)
   */
  lendsTo(peer: number): boolean {
    return this.peers.has(peer);
  }

  send(peer: number, frame: Frame, releasable: Releasable | undefined): boolean {
    if (!this.peers.has(peer)) throw new TransportError(`ucx device of endpoint ${this.options.rank}: no endpoint to endpoint ${peer}`);
    const bytes = messageBytes(frame);
    if (bytes <= this.inlineBytes) {
      this.outbox.write(0, frame);
      this.worker.sendOut(peer, bytes);
      return true;
    }
    const copied = frame.size <= this.copyLimit;
    if (copied) {
      this.sendMessage(peer, wholeMessage(frame, this.checksum), undefined, 0, false);
      return true;
    }
    // A Data frame's id lets its receiver place the body where receiveInto said; the body of a
    // binary message sent without asking, which a receive may want (a point-to-point one: the
    // engine says), waits for its receiver to say where.
    const key = frame.type === FrameType.Data ? frame.id : 0;
    const deferred = frame.type === FrameType.Eager && carriesOneBinary(frame) && this.host?.mayReceiveInto?.(frame) !== false;
    return this.sendMessage(peer, messageParts(frame, this.checksum), releasable, key, deferred) || releasable === undefined;
  }

  /**
   * The Data frame `id` from `peer` comes as parts (the bodies of frames within copyLimit are
   * copied into one message, see send) when it is larger than copyLimit: then its body goes to `memory`.
   */
  receiveInto(peer: number, id: number, memory: Uint8Array): void {
    if (memory.byteLength > this.copyLimit && this.peers.has(peer)) this.worker.expect(peer, id, memory);
  }

  /** Sends one message; true when UCX is done with its parts at once, else `releasable` is told later. */
  private sendMessage(peer: number, parts: readonly Uint8Array[], releasable: Releasable | undefined, key: number, deferred: boolean): boolean {
    const token = (this.nextToken = (this.nextToken + 1) >>> 0);
    if (this.worker.send(peer, parts, token, key, deferred)) return true;
    this.inFlight.set(token, releasable);
    return false;
  }

  /** The progress engine's poll while a call spins: one round of the worker (the spin polls again at once). */
  progress(): number {
    return this.advance(false);
  }

  /**
   * Hands what completed to the engine; returns how much moved. `drain`: progress the worker until
   * it is idle, as a wake-up and the event loop's polls do (each is costly, so it takes all there is).
   */
  private advance(drain: boolean): number {
    // A frame being delivered may make a call wait, which polls: later frames must wait their turn.
    if (this.polling || this.closed) return 0;
    this.polling = true;
    try {
      const moved = this.worker.progress(drain);
      if (moved === 0) return 0;
      const words = this.inboxWords;
      const records = words[0] as number;
      let at = RECORDS_AT;
      // (A frame delivered may end in this device's close, after which the addon holds nothing.)
      for (let record = 0; record < records && !this.closed; record += 1) {
        const index = at / 4;
        const length = words[index + 3] as number;
        at += RECORD_BYTES;
        this.handle(words[index] as number, words[index + 1] as number, words[index + 2] as number, at, length);
        if (words[index] === RecordKind.RECEIVED) at += padded(length);
      }
      return moved;
    } finally {
      this.polling = false;
    }
  }

  /** One record of the inbox; a RECEIVED frame's `length` bytes are at `at`. */
  private handle(kind: number, peer: number, value: number, at: number, length: number): void {
    switch (kind) {
      case RecordKind.RECEIVED:
        if (!this.peers.has(peer)) return;
        if (length === 0) {
          this.wireupFrom?.(peer);
          return;
        }
        this.from = peer;
        try {
          // The addon wrote the frame at an 8-aligned place and left room for its padding.
          const frameLength = this.checksum ? this.checkInboxSum(at, length) : length;
          if (this.inbox.read(at, at + padded(frameLength), this.deliverFrom) !== padded(frameLength)) throw new TransportError(`bad frame: a message of ${length} bytes`);
        } catch (error) {
          this.host?.refused(peer, asFrameError(error));
        }
        return;
      case RecordKind.HELD: {
        const parts = this.worker.takeHeld();
        if (!this.peers.has(peer)) return;
        let frame: Frame;
        let missing: Error | undefined;
        const receiveHeld = (header: Frame, length: number): ArrayBuffer | Uint8Array => {
          try {
            return this.receiveHeld(peer, header, length);
          } catch (error) {
            missing = error as Error;
            throw error;
          }
        };
        try {
          frame = readMessage(parts, receiveHeld, this.checksum);
          if (Array.isArray(parts)) for (const part of parts) this.countReceivedInto(part);
        } catch (error) {
          // A body that never came (its sender stopped or went) is a loss; anything else, a frame that cannot be right.
          if (missing !== undefined) this.host?.lost(peer, missing);
          else this.host?.refused(peer, asFrameError(error));
          return;
        }
        this.deliver(peer, frame);
        return;
      }
      case RecordKind.RECEIVE_FAILED:
        if (this.peers.has(peer)) this.host?.lost(peer, new TransportError(`a receive from it failed in UCX: ${this.options.native.statusText(value | 0)}`));
        return;
      case RecordKind.SENT: {
        const releasable = this.inFlight.get(value);
        this.inFlight.delete(value);
        releasable?.released();
        return;
      }
      case RecordKind.LOST:
        if (this.peers.has(peer)) this.host?.lost(peer, new TransportError(`UCX reports it unreachable: ${this.options.native.statusText(value | 0)}`));
        return;
    }
  }

  /** The length of the frame in the inbox at `at` (a whole message of `length` bytes with its CRC32C at the end), once its sum matches. */
  private checkInboxSum(at: number, length: number): number {
    const frameLength = lengthBeforeSum(length);
    checkSum([this.inboxBytes.subarray(at, at + frameLength)], new DataView(this.inboxBytes.buffer).getUint32(at + frameLength, true));
    return frameLength;
  }

  /** The deferred body of `frame` (a point-to-point message sent without asking), received where its receive wants it. */
  private receiveHeld(peer: number, frame: Frame, length: number): ArrayBuffer | Uint8Array {
    const part = this.worker.receiveHeld(this.host?.destinationFor?.(peer, frame, frame.format, length), this.options.timeoutMs);
    this.countReceivedInto(part);
    return part;
  }

  /** A part that UCX received into its receive's buffer comes as a view of it, not as an ArrayBuffer. */
  private countReceivedInto(part: HeldPart): void {
    if (part instanceof Uint8Array) this.stats.receivedIntoBuffers += 1;
  }

  private deliver(peer: number, frame: Frame): void {
    this.host?.deliver(peer, frame);
    // The peer closed on purpose (the engine saw its Goodbye first).
    if (frame.type === FrameType.Goodbye) this.host?.lost(peer, new TransportError('closed'));
  }

  /** A spin found nothing: let the event loop wake this device. */
  sleep(): void {
    this.idle();
  }

  private woken(): void {
    this.advance(true);
    this.idle();
  }

  /** The worker's event fd rang: counted by the host, then what arrived moves. */
  private rung(): void {
    this.host?.wokenUp?.();
    this.woken();
  }

  /**
   * Between calls: sleep on the worker's event fd, or, while messages are in flight (shared memory
   * does not wake a sender whose data waits for room), poll from the event loop without blocking it.
   */
  private idle(): void {
    if (this.closed) return;
    if (!this.worker.busy()) {
      this.worker.arm();
      return;
    }
    if (this.pollScheduled) return;
    this.pollScheduled = true;
    setImmediate(() => {
      this.pollScheduled = false;
      this.woken();
    });
  }

  disconnect(peer: number): void {
    if (!this.peers.delete(peer)) return;
    this.worker.disconnect(peer);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.safety);
    // What was sent (a Goodbye at least) goes out before the endpoints close.
    const deadline = Date.now() + this.options.timeoutMs;
    while (this.worker.sending() && this.peers.size > 0 && Date.now() < deadline) {
      this.advance(true);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.closed = true;
    this.peers.clear();
    this.host = undefined;
    this.worker.close();
  }
}
