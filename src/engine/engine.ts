/**
 * The messaging engine of one endpoint, like Open MPI's PML over its BTLs: the one place for
 * matching, ordering, the eager and rendezvous protocols, flow control and peer loss, written once
 * for every device. Devices below only move frames; members and collective algorithms above only
 * call `send`, `post` and `probe`.
 *
 * Protocols. A message goes eagerly when it is small (eagerLimit) and the receiver has granted
 * the credit; otherwise a ReadyToSend announces it, the receiver answers ClearToSend once a
 * receive matched it, and the Data follows. sendSync's eager messages ask for an Ack.
 *
 * Flow control. Each receiver grants each sending endpoint a window of bytes for messages it has
 * not matched yet (receiveWindow; every message costs its size plus FRAME_CHARGE). Senders spend
 * the credit, receivers return it as messages are matched, on any frame going back or, past a
 * quarter of the window, in a Credit frame. Eager sends stop a quarter of the window short, which
 * keeps room for ReadyToSend records: a member that floods another does not stop a third one's
 * message behind it (it goes by rendezvous). When even that room is gone the send waits at the
 * sender, in order: memory for unmatched messages stays bounded by window × senders.
 * Large sendAsync data waiting for its receiver is copied at the sender (so the caller may go on)
 * up to sendBuffer bytes; past that the call waits until earlier copies drain or its data is sent.
 * Where the device can lend the data to the peer, the copy waits for the caller's bounded spin: a
 * receiver that clears the message meanwhile reads it from the caller's memory, and the copy (as
 * long as the transfer, for 16 MiB) is never made.
 *
 * Liveness. A send that completes at once resolves through microtasks only; so that a loop of them
 * cannot keep the event loop from turning (peer losses, arriving frames, timers), the progress
 * engine makes one resolve on the next turn once the loop has not turned for a few ms.
 */
import { FLAG_ABORT, FLAG_COLLECTIVE, FLAG_SYNCHRONOUS, Frame, FrameType, NO_BODIES, controlFrame } from '../../transport/frame.js';
import { ANY_SOURCE, AlgorithmProbe, PendingCall, Probe, RESOLVED, Receive, SendCall, SendMode, rejected } from './calls.js';
import type { CallOwner, CallTracker, ProbeResult, Route } from './calls.js';
import { Mailbox } from './matching.js';
import { Queue } from '../base/queue.js';
import { abortError, abortNotice } from './abort.js';
import { nextTurn, progressEngine } from './progress.js';
import { CopyPool } from './copy-pool.js';
import type { Signature } from './signature.js';
import { polls } from '../../transport/device.js';
import type { Device, DeviceHost, DeviceName, DevicePeer } from '../../transport/device.js';
import { BUILT_IN_FORMATS } from '../serialization/message.js';
import { PeerLostError, TransportError } from '../base/errors.js';

/** What every message costs a receiver's window beyond its bytes: the record that holds it. */
export const FRAME_CHARGE = 64;

/** How fast this sender copies a large message's data (about 5 GB/s here, cold memory into a pooled buffer). */
const COPY_BYTES_PER_MICROSECOND = 5000;

/**
 * How long a loss a device saw waits before it fails calls and breaks groups: the word on why the
 * peer went (its goodbye naming an earlier loss, the job's abort, the heartbeats' verdict on
 * another process) travels other ways and may come just after, and must win, so that survivors
 * name the process that was lost, not one that stopped because of it.
 */
const LOSS_GRACE_MS = 250;

export interface EngineOptions {
  /** This endpoint's rank. */
  readonly rank: number;
  readonly eagerLimit: number;
  /** Bytes of rendezvous data sendAsync may keep copied at the sender. */
  readonly sendBuffer: number;
  /** Bound for flushing large messages at close. */
  readonly timeoutMs: number;
  /** The process of each endpoint, for PeerLostError. */
  readonly processOf: (endpoint: number) => number;
  /** How messages name an endpoint ("process 1", "endpoint 3 (process 1, thread 1)"). */
  readonly labelOf: (endpoint: number) => string;
}

/** How this endpoint reaches one peer endpoint (itself included). */
export interface PeerPlan {
  readonly device: Device;
  /** The window the peer grants this endpoint (its receiveWindow). */
  readonly window: number;
  /** The peer is on another host (counted apart in {@link MessageCounts}). */
  readonly otherHost: boolean;
}

/** Messages sent and their bytes (bodies, without frame headers). */
export interface MessageCount {
  /** Messages sent. */
  messages: number;
  /** Their bytes (bodies, without frame headers). */
  bytes: number;
}

/** What this endpoint sent since it started, by device and by where the peer is. */
export interface MessageCounts {
  /** By device name (local, shm, tcp, ucx); devices that sent nothing are absent. */
  readonly byDevice: Partial<Record<DeviceName, MessageCount>>;
  /** To endpoints on this host, this endpoint included. */
  readonly sameHost: MessageCount;
  /** To endpoints on other hosts: what the network carried. */
  readonly otherHost: MessageCount;
}

/** Per-peer protocol and flow-control state. */
class Link {
  /** Bytes this endpoint may still send without the peer matching anything. */
  credit: number;
  /** Credit this endpoint owes the peer for messages it matched. */
  owed = 0;
  /** Bytes the peer's unmatched messages hold here. */
  unmatchedBytes = 0;
  failure: Error | undefined;
  /** Its loss is confirmed: its calls failed and its groups are broken. */
  lost = false;
  /** The peer said goodbye (or this endpoint is closing): once gone, it is not lost, and its groups stay whole. */
  goodbye = false;
  /** Sends waiting for credit, in order. */
  readonly blocked = new Queue<SendCall>();
  draining = false;
  readonly awaitingAck = new Map<number, SendCall>();
  readonly awaitingClearance = new Map<number, SendCall>();
  readonly awaitingData = new Map<number, Receive>();
  /** Messages this endpoint sent the peer, and their bytes (MessageCounts). */
  messagesSent = 0;
  bytesSent = 0;

  /** Largest eager message, and the room eager messages leave for rendezvous records: a quarter of the window. */
  readonly eagerRoom: number;

  constructor(
    readonly peer: number,
    readonly device: Device,
    readonly window: number,
    readonly otherHost: boolean,
  ) {
    this.credit = window;
    this.eagerRoom = window / 4;
  }
}

/** Mailboxes of one group (context) at this endpoint, by receiving rank. */
type Mailboxes = (Mailbox | undefined)[];

/** Counters a test or a benchmark may read. */
export interface EngineStats {
  /** Bytes (with FRAME_CHARGE each) of messages that arrived here unmatched, now. */
  unexpectedBytes: number;
  /** The most that ever was. */
  unexpectedHighWater: number;
  /** Sends that had to wait for credit. */
  blockedSends: number;
  /** Bytes of rendezvous data copied at this sender, now. */
  detachedBytes: number;
  /** sendAsync messages whose data this sender copied so that their callers could go on, so far (the others were lent or eager). */
  copiedSends: number;
}

export class Engine implements DeviceHost, CallTracker {
  readonly stats: EngineStats = { unexpectedBytes: 0, unexpectedHighWater: 0, blockedSends: 0, detachedBytes: 0, copiedSends: 0 };
  private readonly links: (Link | undefined)[] = [];
  /** Mailboxes by context: made by the first frame or the group, whichever comes first. */
  private readonly mailboxesByContext = new Map<number, Mailboxes>();
  /** Pending calls in the order they started waiting. */
  private first: PendingCall | undefined;
  private last: PendingCall | undefined;
  /** sendAsync calls above the eager limit whose data could not be copied yet (sendBuffer full). */
  private readonly undetached = new Queue<SendCall>();
  private readonly copyPool = new CopyPool();
  private nextId = 0;
  private closing = false;
  /** Every group's route here, by context: a loss breaks those that contain the lost endpoint. */
  private readonly routes = new Map<number, Route>();
  /** The first endpoint this one knew lost, named in its goodbyes (see deliver). */
  private firstLost: number | undefined;
  /** Watchdog ticks (advanced by the master's watchdog timer). */
  tick = 0;
  /** Told when a peer is lost (not when it closed on purpose). */
  onLost: ((peer: number, error: PeerLostError) => void) | undefined;

  constructor(
    private readonly options: EngineOptions,
    peers: readonly (PeerPlan | undefined)[],
    /** Every device of this endpoint (also those that serve no peer: they listen all the same), closed with it. */
    private readonly allDevices: readonly Device[],
  ) {
    peers.forEach((plan, peer) => {
      if (plan) this.links[peer] = new Link(peer, plan.device, plan.window, plan.otherHost);
    });
  }

  /**
   * Connects every device to the peers it serves (`peersOf`), with this engine as their host. A
   * polling device that serves a peer is polled by this thread's progress engine from the moment
   * its connect is done until it is closed (close, or a connect that failed: its caller closes
   * the devices).
   */
  async connect(peersOf: (device: Device) => readonly DevicePeer[]): Promise<void> {
    let failed = false;
    try {
      await Promise.all(
        this.allDevices.map(async (device) => {
          const peers = peersOf(device);
          await device.connect(peers, this);
          if (peers.length > 0 && polls(device) && !failed) progressEngine.register(device);
        }),
      );
    } catch (error) {
      failed = true;
      for (const device of this.allDevices) if (polls(device)) progressEngine.unregister(device);
      throw error;
    }
  }

  get rank(): number {
    return this.options.rank;
  }

  /** What each device that can tell holds and waits for (the watchdog's dump). */
  deviceStates(): string[] {
    return this.allDevices.flatMap((device) => (device.describe === undefined ? [] : [device.describe()]));
  }

  /** Messages and bytes sent so far, summed per device and per same host / other host (read on demand: sending only increments two numbers per peer). */
  counters(): MessageCounts {
    const counts: MessageCounts = { byDevice: {}, sameHost: { messages: 0, bytes: 0 }, otherHost: { messages: 0, bytes: 0 } };
    for (const link of this.links) {
      if (link === undefined || link.messagesSent === 0) continue;
      const device = (counts.byDevice[link.device.name] ??= { messages: 0, bytes: 0 });
      const where = link.otherHost ? counts.otherHost : counts.sameHost;
      for (const count of [device, where]) {
        count.messages += link.messagesSent;
        count.bytes += link.bytesSent;
      }
    }
    return counts;
  }

  /** The device serving `peer`, or undefined. */
  deviceOf(peer: number): Device | undefined {
    return this.links[peer]?.device;
  }

  /** The route of a group: what sends, receives and messages about its calls need. */
  route(context: number, name: string, endpoints: Int32Array): Route {
    const route: Route = { context, name, endpoints, mailboxes: this.mailboxesOf(context), failure: undefined };
    this.routes.set(context, route);
    return route;
  }

  // ---- sending ----

  /**
   * Sends `frame` (an Eager-typed message frame; the engine picks the protocol) to its
   * destination rank in `route`. Resolves as `mode` says; a shared resolved promise when done at once.
   */
  send(route: Route, frame: Frame, mode: SendMode, owner: CallOwner | undefined, operation: string): Promise<void> {
    const peer = route.endpoints[frame.destination] as number;
    const link = this.links[peer];
    if (link === undefined) return rejected(new TransportError(`${operation}: no device connects endpoint ${this.rank} to endpoint ${peer}`));
    const failure = this.failureFor(route, frame.destination);
    if (failure) return rejected(this.callFailure(failure, `${operation} to rank ${frame.destination} of group '${route.name}'`));
    link.messagesSent += 1;
    link.bytesSent += frame.size;
    // A peer that a device saw go is not written to: its sends wait for the end of the grace (see lost).
    const suspected = link.failure !== undefined;
    if (!suspected && link.blocked.length === 0 && mode !== SendMode.Synchronous && frame.size <= link.device.copyLimit && this.eagerFits(link, frame.size)) {
      this.sendEager(link, frame, undefined);
      return progressEngine.mustYield() ? nextTurn() : RESOLVED;
    }
    const call = new SendCall(route, operation, owner, frame, mode, peer);
    call.lendingWhileSpinning = mode === SendMode.Captured && frame.size > this.options.eagerLimit && progressEngine.spinning && link.device.lendsTo?.(peer) === true;
    if (suspected || link.blocked.length > 0 || !this.start(link, call)) {
      link.blocked.push(call);
      this.stats.blockedSends += 1;
    }
    if (!call.finished) {
      this.track(call);
      // sendSync's caller waits for the receiver (a clearance, an Ack, the data's release): spin for it as a waiting receive does.
      if (mode === SendMode.Synchronous) progressEngine.wait(call);
      // A large sendAsync's caller spins for the clearance no longer than the copy it may spare.
      if (call.lendingWhileSpinning) progressEngine.waitUpTo(call, frame.size / COPY_BYTES_PER_MICROSECOND, () => this.stopLending(call));
    }
    const promise = call.promise;
    return promise === RESOLVED && progressEngine.mustYield() ? nextTurn() : promise;
  }

  /**
   * Whether a message of `size` bytes may go eagerly now. One the peer reads from our memory
   * (`lent`) may take all the credit but the eager room (which stays for rendezvous records);
   * others are bounded by eagerLimit and the eager room.
   */
  private eagerFits(link: Link, size: number, lent = false): boolean {
    const charge = size + FRAME_CHARGE;
    return (lent || (size <= this.options.eagerLimit && charge <= link.eagerRoom)) && link.credit - charge >= link.eagerRoom;
  }

  /**
   * Starts `call` eagerly or by rendezvous; false when there is no credit for either. Where the
   * device lets the peer copy a message straight from our memory (shm's single copy), a call that
   * waits for its buffers anyway (not sendAsync, which returns once the value is captured) goes
   * eagerly whatever its size, while the credit allows: the peer reads it when it arrives, which
   * spares the round trip of a rendezvous (ReadyToSend, ClearToSend), and the credit it takes
   * still bounds the memory of unexpected messages at the receiver.
   */
  private start(link: Link, call: SendCall): boolean {
    const frame = call.frame;
    // sendAsync returns once its value is captured: it cannot wait for the peer to read it.
    const mayLend = call.mode !== SendMode.Captured;
    const lent = mayLend && frame.size > this.options.eagerLimit && link.device.lendsTo?.(link.peer) === true;
    if (this.eagerFits(link, frame.size, lent)) {
      if (call.mode === SendMode.Synchronous) {
        call.id = this.newId();
        call.awaitingAck = true;
        frame.flags |= FLAG_SYNCHRONOUS;
        frame.id = call.id;
        link.awaitingAck.set(call.id, call);
      }
      const kept = frame.size > link.device.copyLimit;
      call.awaitingRelease = kept;
      call.transmitted = true;
      if (this.sendEager(link, frame, kept ? call : undefined, mayLend)) call.awaitingRelease = false;
      call.settleIfDone();
      return true;
    }
    if (link.credit < FRAME_CHARGE) return false;
    link.credit -= FRAME_CHARGE;
    call.id = this.newId();
    link.awaitingClearance.set(call.id, call);
    if (call.mode === SendMode.Captured && !call.lendingWhileSpinning) this.detach(call);
    const announcement = new Frame(FrameType.ReadyToSend, frame.flags, frame.context, frame.source, frame.destination, frame.tag, frame.operation, frame.root, frame.reduction, frame.format, NO_BODIES, frame.size, call.id);
    this.output(link, announcement, undefined);
    return true;
  }

  private sendEager(link: Link, frame: Frame, releasable: SendCall | undefined, lend = false): boolean {
    link.credit -= frame.size + FRAME_CHARGE;
    frame.type = FrameType.Eager;
    return this.output(link, frame, releasable, lend);
  }

  /**
   * Hands a frame to the device, with the credit this endpoint owes the peer riding along. `lend`:
   * whoever waits for the release may wait for the peer to read the bodies (see Device.send).
   */
  private output(link: Link, frame: Frame, releasable: SendCall | { released(): void } | undefined, lend = false): boolean {
    // A peer that closed (or is lost) reads nothing more. What still comes this far is control, such
    // as the credit of its messages received after it closed, and is dropped: its device may be gone.
    if (link.failure !== undefined) return true;
    frame.credit = link.owed;
    link.owed = 0;
    return link.device.send(link.peer, frame, releasable, lend);
  }

  /** A sendAsync above the eager limit: copy its data so the caller may go on, if sendBuffer allows. */
  private detach(call: SendCall): void {
    const size = call.frame.size;
    if (this.stats.detachedBytes > 0 && this.stats.detachedBytes + size > this.options.sendBuffer) {
      this.undetached.push(call);
      return;
    }
    call.copies = this.copyPool.copyBodies(call.frame);
    call.detached = true;
    this.stats.detachedBytes += size;
    this.stats.copiedSends += 1;
    call.finish();
  }

  /** The spin of a sendAsync that meant to lend its data is over: an announced message still not cleared is copied now. */
  private stopLending(call: SendCall): void {
    call.lendingWhileSpinning = false;
    if (call.id !== 0 && !call.transmitted && !call.finished) this.detach(call);
  }

  /** Copied data went out (or will never): let waiting sendAsync calls copy theirs. */
  private detachedDone(size: number): void {
    this.stats.detachedBytes -= size;
    while (this.undetached.length > 0) {
      const call = this.undetached.at(0);
      if (call.finished || call.transmitted) {
        this.undetached.shift();
        continue;
      }
      if (this.stats.detachedBytes > 0 && this.stats.detachedBytes + call.frame.size > this.options.sendBuffer) return;
      this.undetached.shift();
      this.detach(call);
    }
  }

  private newId(): number {
    this.nextId = nextSendId(this.nextId);
    return this.nextId;
  }

  // ---- receiving ----

  /** Posts `receive`; it may complete before this returns (the message was already here). */
  post(receive: Receive): void {
    // A broken group's calls fail at once, even those whose message is already here.
    if (receive.route.failure !== undefined) {
      receive.fail(this.callFailure(this.failureFor(receive.route, receive.source) as Error, receive.describe()));
      return;
    }
    const mailbox = receive.route.mailboxes[receive.destination] ?? this.mailbox(receive.route.context, receive.destination);
    const aborted = receive.collective ? mailbox.abortedCall(receive.tagOrAny) : undefined;
    if (aborted !== undefined) {
      receive.fail(aborted);
      return;
    }
    const frame = mailbox.post(receive);
    if (frame !== undefined) {
      const link = this.links[frame.peer] as Link;
      this.matched(link, frame, receive, this.unqueued(link, frame));
      return;
    }
    const failure = this.failureFor(receive.route, receive.source);
    if (failure !== undefined) {
      mailbox.remove(receive);
      receive.fail(this.callFailure(failure, receive.describe()));
      return;
    }
    this.track(receive);
  }

  /** Resolves with the envelope of the earliest unmatched point-to-point message that fits, once there is one. */
  probe(route: Route, owner: CallOwner | undefined, destination: number, source: number, tag: number): Promise<ProbeResult> {
    const mailbox = this.mailbox(route.context, destination);
    const probe = new Probe(route, owner, destination, source, tag);
    const frame = route.failure === undefined ? mailbox.peek(source, probe) : undefined;
    if (frame !== undefined) return Promise.resolve({ source: frame.source, tag: frame.tag, bytes: frame.size });
    const failure = this.failureFor(route, source);
    if (failure !== undefined) return rejected(this.callFailure(failure, probe.describe()));
    mailbox.addProbe(probe);
    this.track(probe);
    return probe.promise;
  }

  /**
   * Resolves with the operation code of the first message of collective call `tag` that names
   * its algorithm (a non-root learning the root's choice).
   */
  probeAlgorithm(route: Route, owner: CallOwner | undefined, destination: number, tag: number, operation: string): Promise<number> {
    const mailbox = this.mailbox(route.context, destination);
    const aborted = route.failure === undefined ? mailbox.abortedCall(tag) : undefined;
    if (aborted !== undefined) return rejected(aborted);
    const frame = mailbox.peekAlgorithm(tag);
    if (frame !== undefined) return Promise.resolve(frame.operation);
    const probe = new AlgorithmProbe(route, operation, owner, destination, tag);
    const failure = this.failureFor(route, ANY_SOURCE);
    if (failure !== undefined) return rejected(this.callFailure(failure, probe.describe()));
    mailbox.addAlgorithmProbe(probe);
    this.track(probe);
    return probe.promise;
  }

  /**
   * Collective call `tag` of `route` failed at member `rank` (`error`): its own pending part
   * fails, and every other member is told, so that none waits for data that will never come.
   */
  abortCollective(route: Route, rank: number, tag: number, signature: Signature, error: Error): void {
    this.abortCall(route.context, rank, tag, error);
    const body = abortNotice(error);
    for (let destination = 0; destination < route.endpoints.length; destination += 1) {
      if (destination === rank) continue;
      const frame = new Frame(FrameType.Eager, FLAG_COLLECTIVE | FLAG_ABORT, route.context, rank, destination, tag, signature.operation, signature.root, signature.reduction, body.format, [body.bytes], body.bytes.byteLength);
      this.send(route, frame, SendMode.Borrowed, undefined, 'abort').catch(() => undefined);
    }
  }

  /** Fails member `destination`'s part of collective call `tag` (now and when it gets there) and drops its messages. */
  private abortCall(context: number, destination: number, tag: number, error: Error): void {
    const taken = this.mailbox(context, destination).abortCall(tag, error);
    // The call is over: receives its algorithm posted but had not awaited yet must not count as unhandled.
    for (const call of [...taken.receives, ...taken.probes]) {
      this.untrack(call);
      call.fail(error);
      call.abandon();
    }
    for (const frame of taken.arrivals) {
      const link = this.links[frame.peer] as Link;
      this.unqueued(link, frame);
      this.drop(link, frame);
    }
    for (const link of this.links) {
      if (link === undefined) continue;
      for (const [id, receive] of link.awaitingData) {
        if (receive.route.context !== context || receive.destination !== destination || !receive.collective || receive.tagOrAny !== tag) continue;
        link.awaitingData.delete(id);
        this.untrack(receive);
        receive.fail(error);
        receive.abandon();
      }
    }
  }

  /**
   * A message nobody will receive (its collective call was aborted): its credit goes back, and
   * an announced one is cleared all the same, so that its sender is not left waiting (its data is
   * ignored when it comes).
   */
  private drop(link: Link, frame: Frame): void {
    link.owed += chargeOf(frame);
    if (frame.type === FrameType.ReadyToSend) this.output(link, controlFrame(FrameType.ClearToSend, frame, frame.id), undefined);
    else this.returnCreditIfDue(link);
  }

  /** A device delivered a frame from `peer`. */
  deliver(peer: number, frame: Frame): void {
    const link = this.links[peer];
    if (link === undefined || link.failure !== undefined) return;
    frame.peer = peer;
    if (frame.credit > 0) this.addCredit(link, frame.credit);
    switch (frame.type) {
      case FrameType.Eager:
      case FrameType.ReadyToSend:
        this.arrive(link, frame);
        return;
      case FrameType.ClearToSend:
        this.cleared(link, frame.id);
        return;
      case FrameType.Data: {
        const receive = link.awaitingData.get(frame.id);
        if (receive === undefined) return;
        link.awaitingData.delete(frame.id);
        this.untrack(receive);
        receive.complete(frame);
        return;
      }
      case FrameType.Ack: {
        const call = link.awaitingAck.get(frame.id);
        link.awaitingAck.delete(frame.id);
        call?.acknowledged();
        return;
      }
      case FrameType.Credit:
        return;
      case FrameType.Goodbye:
        link.goodbye = true;
        // A peer that closes after a loss names it (id: endpoint + 1), so that a call here which
        // waited for that peer fails naming the lost process, not the peer that merely closed.
        if (frame.id > 0) this.reportedLost(frame.id - 1, peer);
        return;
      default:
        this.lost(peer, new TransportError(`endpoint ${peer} sent a frame of unknown type ${String(frame.type)}`));
    }
  }

  /**
   * Memory that the receive `frame` will complete wants its one binary body read into (see
   * Receive.destinationFor), asked by a device that reads bodies itself, just before it delivers
   * the frame: the cleared receive of a Data frame, or the receive a point-to-point Eager frame
   * matches now.
   */
  destinationFor(peer: number, frame: Frame, format: number, bytes: number): Uint8Array | undefined {
    const link = this.links[peer];
    if (link === undefined || link.failure !== undefined) return undefined;
    if (frame.type === FrameType.Data) return link.awaitingData.get(frame.id)?.destinationFor(format, bytes);
    if (frame.type !== FrameType.Eager || (frame.flags & FLAG_COLLECTIVE) !== 0 || this.routes.get(frame.context)?.failure !== undefined) return undefined;
    return this.mailboxesByContext.get(frame.context)?.[frame.destination]?.receiveFor(frame)?.destinationFor(format, bytes);
  }

  /** A receive may want the body of a point-to-point message, never a collective's (see DeviceHost.mayReceiveInto). */
  mayReceiveInto(frame: Frame): boolean {
    return (frame.flags & FLAG_COLLECTIVE) === 0;
  }

  /** The built-in serializers' decoders keep no byte of a body (see DeviceHost.mayPoolBodies). */
  mayPoolBodies(format: number): boolean {
    return BUILT_IN_FORMATS.has(format);
  }

  /** Whether this thread spins on its polling devices (see DeviceHost.spins). */
  spins(): boolean {
    return progressEngine.spinning;
  }

  private arrive(link: Link, frame: Frame): void {
    if (this.routes.get(frame.context)?.failure !== undefined) {
      this.drop(link, frame);
      return;
    }
    const mailbox = this.mailbox(frame.context, frame.destination);
    const collective = (frame.flags & FLAG_COLLECTIVE) !== 0;
    if (collective && (frame.flags & FLAG_ABORT) !== 0) {
      this.drop(link, frame);
      this.abortCall(frame.context, frame.destination, frame.tag, abortError(frame));
      return;
    }
    if (collective && mailbox.abortedCall(frame.tag) !== undefined) {
      this.drop(link, frame);
      return;
    }
    const receive = mailbox.arrive(frame, collective);
    const charge = chargeOf(frame);
    if (receive !== undefined) {
      this.untrack(receive);
      this.matched(link, frame, receive, charge);
      return;
    }
    link.unmatchedBytes += charge;
    this.stats.unexpectedBytes += charge;
    if (this.stats.unexpectedBytes > this.stats.unexpectedHighWater) this.stats.unexpectedHighWater = this.stats.unexpectedBytes;
  }

  /** A message met its receive: acknowledge or clear it as the protocol says, and return its credit. */
  private matched(link: Link, frame: Frame, receive: Receive, charge: number): void {
    link.owed += charge;
    if (frame.type === FrameType.ReadyToSend) {
      link.awaitingData.set(frame.id, receive);
      this.track(receive);
      if (link.device.receiveInto !== undefined) {
        const memory = receive.destinationFor(frame.format, frame.size);
        if (memory !== undefined) link.device.receiveInto(link.peer, frame.id, memory);
      }
      this.output(link, controlFrame(FrameType.ClearToSend, frame, frame.id), undefined);
      return;
    }
    if ((frame.flags & FLAG_SYNCHRONOUS) !== 0) this.output(link, controlFrame(FrameType.Ack, frame, frame.id), undefined);
    else this.returnCreditIfDue(link);
    receive.complete(frame);
  }

  /** Past a quarter of the window, owed credit goes back in a frame of its own (no other frame may be going that way soon). */
  private returnCreditIfDue(link: Link): void {
    if (link.owed >= link.eagerRoom) this.output(link, new Frame(FrameType.Credit, 0, 0, 0, 0, 0, 0, 0, 0, 0, NO_BODIES, 0), undefined);
  }

  /** An unmatched message leaves the mailbox: the bytes it held there are free again. Returns its charge. */
  private unqueued(link: Link, frame: Frame): number {
    const charge = chargeOf(frame);
    link.unmatchedBytes -= charge;
    this.stats.unexpectedBytes -= charge;
    return charge;
  }

  /** The receiver matched our announced message: send its data. */
  private cleared(link: Link, id: number): void {
    const call = link.awaitingClearance.get(id);
    if (call === undefined) return;
    link.awaitingClearance.delete(id);
    const message = call.frame;
    const data = new Frame(FrameType.Data, message.flags, message.context, message.source, message.destination, message.tag, message.operation, message.root, message.reduction, message.format, message.bodies.slice(), message.size, id, 0, message.ownsFirstBody);
    call.transmitted = true;
    const kept = message.size > link.device.copyLimit;
    if (call.detached) {
      const size = message.size;
      const done = {
        released: () => {
          this.copyPool.giveBack(call.copies);
          this.detachedDone(size);
        },
      };
      if (this.output(link, data, kept ? done : undefined, true)) done.released();
      return;
    }
    call.awaitingRelease = kept;
    if (this.output(link, data, kept ? call : undefined, true)) call.awaitingRelease = false;
    call.settleIfDone();
  }

  private addCredit(link: Link, amount: number): void {
    link.credit += amount;
    if (link.blocked.length === 0 || link.draining) return;
    link.draining = true;
    try {
      while (link.blocked.length > 0 && link.failure === undefined) {
        const call = link.blocked.at(0);
        if (!this.start(link, call)) break;
        link.blocked.shift();
      }
    } finally {
      link.draining = false;
    }
  }

  // ---- loss ----

  /** A device lost its link to `peer`. */
  lost(peer: number, error: Error): void {
    const link = this.links[peer];
    if (link === undefined || link.failure !== undefined) return;
    const processRank = this.options.processOf(peer);
    const endpoint = this.options.labelOf(peer);
    if (link.goodbye || this.closing) {
      this.markClosed(link, new PeerLostError(`${endpoint} closed its connection`, processRank, { endpointRank: peer }));
      return;
    }
    const loss = error instanceof PeerLostError ? error : new PeerLostError(`${endpoint} was lost (${error.message})`, processRank, { cause: error, endpointRank: peer });
    // Nothing more is written to it or read from it; its calls wait for the grace.
    link.failure = loss;
    setTimeout(() => {
      if (link.lost) return;
      this.markLost(peer, loss);
      this.onLost?.(peer, loss);
    }, LOSS_GRACE_MS).unref();
  }

  /**
   * `peer` is lost, and with it every endpoint of its process (a process ends whole: a failing
   * thread ends it). Calls that need one of them fail with its error; every group that contains
   * one is broken for good (ULFM's revoke): its pending calls fail now and its later calls at
   * once, with `error`, whether or not they talk to the lost endpoints.
   */
  markLost(peer: number, error: Error): void {
    const link = this.links[peer];
    if (link === undefined || link.lost || link.goodbye) return;
    link.lost = true;
    link.failure ??= error;
    const fallen = [link];
    const processRank = this.options.processOf(peer);
    for (const sibling of this.links) {
      if (sibling === undefined || sibling.lost || sibling.goodbye || sibling.peer === this.rank || this.options.processOf(sibling.peer) !== processRank) continue;
      sibling.lost = true;
      sibling.failure ??= error instanceof PeerLostError ? new PeerLostError(`${this.options.labelOf(sibling.peer)} was lost with its process: ${error.message}`, processRank, { cause: error, endpointRank: sibling.peer }) : error;
      fallen.push(sibling);
    }
    if (error instanceof PeerLostError) this.firstLost ??= peer;
    const broken = [...this.routes.values()].filter((route) => route.failure === undefined && fallen.some((lost) => route.endpoints.includes(lost.peer)));
    for (const route of broken) route.failure = error;
    for (const call of this.pending()) {
      const failure = this.failureFor(call.route, call.peerRank);
      if (failure === undefined) continue;
      this.failPending(call, failure);
      // An algorithm that failed on one of its receives never awaits the others it had posted.
      if (call.route.failure !== undefined) call.abandon();
    }
    for (const lost of fallen) this.release(lost);
    for (const route of broken) this.forgetRoute(route);
  }

  /** `link`'s peer closed (or this endpoint did): calls that need it fail; its groups stay whole. */
  private markClosed(link: Link, error: PeerLostError): void {
    link.goodbye = true;
    link.failure = error;
    for (const call of this.pending()) if (this.needs(call, link.peer)) this.failPending(call, error);
    this.release(link);
  }

  /** A peer closing named `peer` lost (see the Goodbye frame in deliver). */
  private reportedLost(peer: number, reporter: number): void {
    if (this.links[peer]?.lost !== false || this.options.processOf(peer) === this.options.processOf(this.rank)) return;
    const loss = new PeerLostError(`${this.options.labelOf(peer)} was lost (as ${this.options.labelOf(reporter)} said when it closed)`, this.options.processOf(peer), { endpointRank: peer });
    this.markLost(peer, loss);
    this.onLost?.(peer, loss);
  }

  private needs(call: PendingCall, peer: number): boolean {
    if (call instanceof SendCall) return call.peer === peer;
    const source = call.peerRank;
    const endpoints = call.route.endpoints;
    return source === ANY_SOURCE ? endpoints.includes(peer) : endpoints[source] === peer;
  }

  private failPending(call: PendingCall, failure: Error): void {
    if (call instanceof Receive || call instanceof Probe || call instanceof AlgorithmProbe) call.route.mailboxes[call.destination]?.remove(call);
    this.untrack(call);
    call.fail(this.callFailure(failure, call.describe()));
  }

  /** Drops what `link` still held for a peer that is gone. */
  private release(link: Link): void {
    for (const call of link.awaitingClearance.values()) if (call.detached) this.detachedDone(call.frame.size);
    link.blocked.removeWhere(() => true);
    link.awaitingAck.clear();
    link.awaitingClearance.clear();
    link.awaitingData.clear();
    link.device.disconnect(link.peer);
  }

  /**
   * A broken group's traffic with the survivors stops: sends of it waiting for them are dropped,
   * and its unmatched messages here give their credit back (later ones are dropped as they come,
   * see arrive), so that the survivors' other groups keep their flow.
   */
  private forgetRoute(route: Route): void {
    const ofRoute = (call: { route: Route }) => call.route === route;
    for (const link of this.links) {
      if (link === undefined || link.failure !== undefined) continue;
      link.blocked.removeWhere(ofRoute);
      for (const [id, call] of link.awaitingClearance) {
        if (!ofRoute(call)) continue;
        link.awaitingClearance.delete(id);
        if (call.detached) this.detachedDone(call.frame.size);
      }
      for (const [id, call] of link.awaitingAck) if (ofRoute(call)) link.awaitingAck.delete(id);
      for (const [id, receive] of link.awaitingData) if (ofRoute(receive)) link.awaitingData.delete(id);
    }
    for (const mailbox of route.mailboxes) {
      for (const frame of mailbox?.takeUnmatched() ?? []) {
        const link = this.links[frame.peer] as Link;
        this.unqueued(link, frame);
        if (link.failure === undefined) this.drop(link, frame);
      }
    }
  }

  /**
   * The failure a call on `route` with `source` (a rank or ANY_SOURCE) meets, if any: its broken
   * group's (but a call to an endpoint of the lost process names that endpoint), else its peer's.
   */
  private failureFor(route: Route, source: number): Error | undefined {
    const broken = route.failure;
    if (source !== ANY_SOURCE) {
      const direct = this.gone(this.links[route.endpoints[source] as number]);
      if (broken === undefined) return direct;
      return direct instanceof PeerLostError && broken instanceof PeerLostError && direct.processRank === broken.processRank ? direct : broken;
    }
    if (broken !== undefined) return broken;
    for (const endpoint of route.endpoints) {
      const failure = this.gone(this.links[endpoint]);
      if (failure !== undefined) return failure;
    }
    return undefined;
  }

  /** Why `link`'s peer is gone, once it is for sure: lost, or closed (a loss a device saw waits for its grace). */
  private gone(link: Link | undefined): Error | undefined {
    return link !== undefined && (link.lost || link.goodbye) ? link.failure : undefined;
  }

  /** `error` restated in terms of one call ("receive from rank 1 of group 'g' failed: ..."). */
  private callFailure(error: Error, call: string): Error {
    if (!(error instanceof PeerLostError)) return error;
    return new PeerLostError(`${call} failed: ${error.message}`, error.processRank, { cause: error, endpointRank: error.endpointRank });
  }

  // ---- pending calls ----

  private track(call: PendingCall): void {
    if (call.linked) return;
    call.linked = true;
    if (call instanceof SendCall || call instanceof Probe || call instanceof AlgorithmProbe) call.tracker = this;
    call.born = this.tick;
    call.previous = this.last;
    call.next = undefined;
    if (this.last) this.last.next = call;
    else this.first = call;
    this.last = call;
    if (call.owner) call.owner.pendingCalls += 1;
  }

  private untrack(call: PendingCall): void {
    if (!call.linked) return;
    call.linked = false;
    if (call.previous) call.previous.next = call.next;
    else this.first = call.next;
    if (call.next) call.next.previous = call.previous;
    else this.last = call.previous;
    call.previous = call.next = undefined;
    if (call.owner) call.owner.pendingCalls -= 1;
  }

  /** Calls waiting now, oldest first (optionally only `owner`'s). */
  pending(owner?: CallOwner): PendingCall[] {
    const calls: PendingCall[] = [];
    for (let call = this.first; call !== undefined; call = call.next) if (owner === undefined || call.owner === owner) calls.push(call);
    return calls;
  }

  /** The oldest pending call (for the watchdog). */
  oldestPending(): PendingCall | undefined {
    return this.first;
  }

  /** A call settled from a device's callback (a release, an Ack). */
  settled(call: PendingCall): void {
    this.untrack(call);
  }

  // ---- the rest ----

  /** Messages that arrived here and were never received, counted by "context/source/destination/tag". */
  unreceived(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [context, mailboxes] of this.mailboxesByContext) {
      mailboxes.forEach((mailbox) => {
        for (const frame of mailbox?.unmatchedMessages() ?? []) {
          const key = `${context}/${frame.source}/${frame.destination}/${(frame.flags & FLAG_COLLECTIVE) !== 0 ? `collective ${frame.tag}` : frame.tag}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
      });
    }
    return counts;
  }

  /**
   * Sends the large messages still waiting for their receivers first (a sendAsync returned long
   * ago, so its data must not be dropped), for at most timeoutMs; says goodbye; closes the devices.
   */
  async close(): Promise<void> {
    const unsent = () => this.links.reduce((count, link) => count + (link && link.failure === undefined ? link.awaitingClearance.size + link.blocked.length : 0), 0);
    if (unsent() > 0) {
      const deadline = Date.now() + this.options.timeoutMs;
      while (unsent() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      if (unsent() > 0) process.stderr.write(`ccjs: endpoint ${this.rank} closes with ${unsent()} message(s) never received within ${this.options.timeoutMs} ms\n`);
    }
    this.sayGoodbye();
    await Promise.all(
      this.allDevices.map((device) => {
        if (polls(device)) progressEngine.unregister(device);
        return device.close();
      }),
    );
  }

  /**
   * This endpoint stops because a peer's loss failed one of its members (the job aborts): its
   * peers hear which endpoint was lost from it, on each link before the link closes. The job's
   * abort comes round through the coordinator and may miss LOSS_GRACE_MS on a loaded machine;
   * a peer would then name this endpoint's process as the lost one.
   */
  leaveAfterLoss(): void {
    if (this.firstLost !== undefined && !this.closing) this.sayGoodbye();
  }

  /** A Goodbye on every live link, naming the first endpoint this one knew lost (id: endpoint + 1; 0: none). */
  private sayGoodbye(): void {
    this.closing = true;
    const lost = this.firstLost === undefined ? 0 : this.firstLost + 1;
    for (const link of this.links) {
      if (link && link.peer !== this.rank) this.output(link, new Frame(FrameType.Goodbye, 0, 0, 0, 0, 0, 0, 0, 0, 0, NO_BODIES, 0, lost), undefined);
    }
  }

  private mailboxesOf(context: number): Mailboxes {
    let mailboxes = this.mailboxesByContext.get(context);
    if (mailboxes === undefined) {
      mailboxes = [];
      this.mailboxesByContext.set(context, mailboxes);
    }
    return mailboxes;
  }

  private mailbox(context: number, destination: number): Mailbox {
    const mailboxes = this.mailboxesOf(context);
    let mailbox = mailboxes[destination];
    if (mailbox === undefined) {
      mailbox = new Mailbox();
      mailboxes[destination] = mailbox;
    }
    return mailbox;
  }
}

/** Send ids are u32 on the wire and wrap (never to 0); a long job never runs out of them. */
export function nextSendId(previous: number): number {
  return (previous % 0xffff_ffff) + 1;
}

/** What an unmatched frame costs its receiver's window: bytes held plus the record. */
function chargeOf(frame: Frame): number {
  return frame.type === FrameType.Eager ? frame.size + FRAME_CHARGE : FRAME_CHARGE;
}
