/**
 * The messaging engine of one endpoint, like Open MPI's PML over its BTLs: the one place for
 * matching, ordering, the eager and rendezvous protocols and flow control, written once for every
 * device, with peer loss (losses.ts) and the list of pending calls (pending-calls.ts) beside it.
 * Devices below only move frames; members and collective algorithms above only call `send`,
 * `post` and `probe`.
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
import { FLAG_ABORT, FLAG_COLLECTIVE, FLAG_SYNCHRONOUS, FrameType, ack, clearToSend, creditReturn, lostNamedIn, readyToSend, rendezvousData } from '../../transport/frame.js';
import type { Frame } from '../../transport/frame.js';
import { ANY_SOURCE, AlgorithmProbe, Probe, RESOLVED, SendCall, SendMode, SharedMemoryWait, rejected } from './calls.js';
import type { CallOwner, PendingCall, ProbeResult, Receive, Route } from './calls.js';
import { Mailbox } from './matching.js';
import { Queue } from '../base/queue.js';
import { abortError, abortFrame, abortNotice } from './abort.js';
import { Link } from './link.js';
import { Losses, callFailure } from './losses.js';
import type { EndpointNames } from './losses.js';
import { PendingCalls } from './pending-calls.js';
import { nextTurn, progressEngine } from './progress.js';
import { CopyPool } from './copy-pool.js';
import type { Signature } from './signature.js';
import { polls } from '../../transport/device.js';
import type { Device, DeviceHost, DeviceName, DevicePeer } from '../../transport/device.js';
import { BUILT_IN_FORMATS } from '../serialization/message.js';
import { FrameError, PeerLostError, TransportError } from '../base/errors.js';

/** What every message costs a receiver's window beyond its bytes: the record that holds it. */
export const FRAME_CHARGE = 64;

/** How fast this sender copies a large message's data (about 5 GB/s here, cold memory into a pooled buffer). */
const COPY_BYTES_PER_MICROSECOND = 5000;

/** The engine's settings; its rank and how it names endpoints (EndpointNames) serve loss handling too. */
export interface EngineOptions extends EndpointNames {
  readonly eagerLimit: number;
  /** Bytes of rendezvous data sendAsync may keep copied at the sender. */
  readonly sendBuffer: number;
  /** Bound for flushing large messages at close. */
  readonly timeoutMs: number;
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

export class Engine implements DeviceHost {
  readonly stats: EngineStats = { unexpectedBytes: 0, unexpectedHighWater: 0, blockedSends: 0, detachedBytes: 0, copiedSends: 0 };
  private readonly links: (Link | undefined)[] = [];
  /** Mailboxes by context: made by the first frame or the group, whichever comes first. */
  private readonly mailboxesByContext = new Map<number, Mailboxes>();
  private readonly calls = new PendingCalls();
  /** sendAsync calls above the eager limit whose data could not be copied yet (sendBuffer full). */
  private readonly undetached = new Queue<SendCall>();
  /** Memory for the copies of large sendAsync data (its stats say how often it was reused). */
  readonly copyPool = new CopyPool();
  private nextId = 0;
  /** Every group's route here, by context: a loss breaks those that contain the lost endpoint. */
  private readonly routes = new Map<number, Route>();
  /** Peers that go: their calls failed, their groups broken, goodbyes said and heard. */
  private readonly losses: Losses;
  /** Contexts of the groups the job formed, as the coordinator announced them. */
  private readonly formedContexts = new Set<number>();
  /** Contexts that frames named before any group of theirs was known here: each gets timeoutMs to be announced. */
  private readonly awaitedContexts = new Map<number, NodeJS.Timeout>();
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
    this.losses = new Losses(options, this.links, this.routes, this.calls, {
      output: (link, frame) => this.output(link, frame, undefined),
      detachedDone: (size) => this.detachedDone(size),
      dropUnmatched: (frame) => this.dropUnmatched(frame),
      peerLost: (peer, error) => this.onLost?.(peer, error),
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
    this.contextFormed(context);
    // Messages that came before the group was known here are judged now.
    for (const mailbox of route.mailboxes) {
      for (const frame of [...(mailbox?.unmatchedMessages() ?? [])]) {
        const lie = this.envelopeLie(route, frame, frame.peer);
        if (lie !== undefined) this.refused(frame.peer, lie);
      }
    }
    return route;
  }

  /** The job formed a group with `context` (the coordinator said so): frames naming it are no lie. */
  contextFormed(context: number): void {
    this.formedContexts.add(context);
    clearTimeout(this.awaitedContexts.get(context));
    this.awaitedContexts.delete(context);
  }

  /**
   * What is wrong with the envelope of a message frame from endpoint `peer` in group `route`, if
   * anything: its source must be the sending endpoint's member, its destination one of this endpoint's.
   */
  private envelopeLie(route: Route, frame: Frame, peer: number): FrameError | undefined {
    const { endpoints, name } = route;
    if (frame.source >= endpoints.length || endpoints[frame.source] !== peer) {
      return new FrameError('source', `a message of group '${name}' (context ${frame.context}) from rank ${frame.source}, which is not a member of the sending endpoint ${peer}`);
    }
    if (frame.destination >= endpoints.length || endpoints[frame.destination] !== this.rank) {
      return new FrameError('destination', `a message of group '${name}' (context ${frame.context}) for rank ${frame.destination}, which is not a member of this endpoint ${this.rank}`);
    }
    return undefined;
  }

  /**
   * A message frame from `link`'s peer names a context no group here has: the job may have formed
   * it just now (its announcement is on its way, or this endpoint's getGroup is still to come), so
   * it waits, timeoutMs at most, for the coordinator to announce it; a context never formed is a lie.
   */
  private awaitContext(link: Link, context: number): void {
    if (this.formedContexts.has(context) || this.awaitedContexts.has(context)) return;
    const { timeoutMs } = this.options;
    const timer = setTimeout(() => {
      this.awaitedContexts.delete(context);
      if (!this.formedContexts.has(context)) this.refused(link.peer, new FrameError('context', `a message of context ${context}, which names no group the job formed within ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
    this.awaitedContexts.set(context, timer);
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
    const failure = this.losses.failureFor(route, frame.destination, frame.source);
    if (failure) return rejected(callFailure(failure, `${operation} to rank ${frame.destination} of group '${route.name}'`));
    link.messagesSent += 1;
    link.bytesSent += frame.size;
    // A peer that a device saw go is not written to: its sends wait for the end of the grace (see Losses.lost).
    const suspected = link.failure !== undefined;
    if (!suspected && link.blocked.length === 0 && mode !== SendMode.Synchronous && frame.size <= link.device.copyLimit && this.eagerFits(link, frame.size)) {
      this.sendEager(link, frame, undefined);
      return this.settleInOrder(link, RESOLVED);
    }
    const call = new SendCall(route, operation, owner, frame, mode, peer);
    call.lendingWhileSpinning = mode === SendMode.Captured && frame.size > this.options.eagerLimit && progressEngine.spinning && link.device.lendsTo?.(peer) === true;
    if (suspected || link.blocked.length > 0 || !this.start(link, call)) {
      link.blocked.push(call);
      this.stats.blockedSends += 1;
    }
    if (!call.finished) {
      this.calls.track(call);
      // sendSync's caller waits for the receiver (a clearance, an Ack, the data's release): spin for it as a waiting receive does.
      if (mode === SendMode.Synchronous) progressEngine.wait(call);
      // A large sendAsync's caller spins for the clearance no longer than the copy it may spare.
      if (call.lendingWhileSpinning) progressEngine.waitUpTo(call, frame.size / COPY_BYTES_PER_MICROSECOND, () => this.stopLending(call));
    }
    const settled = this.settleInOrder(link, call.promise);
    // A collective's send (MPI_Isend) is awaited later, perhaps after other awaits: it spins then.
    return mode === SendMode.Borrowed ? progressEngine.whenAwaited(call, settled) : settled;
  }

  /**
   * What the caller of a send to `link` awaits, given the send's own `promise`. A send done at
   * once may settle on the next turn of the event loop instead (ProgressEngine.mustYield); the
   * sends after such a one settle after it, so that the guard never reorders sends to one peer
   * (MPI's Waitany over them expects the first). Only those put-off sends make later ones wait:
   * a send that waits for its peer (credit, clearance, an acknowledgement) settles when its
   * protocol says, as without the guard, and never holds back the sends after it, which its peer
   * (or another member of this endpoint) may be waiting for.
   */
  private settleInOrder(link: Link, promise: Promise<void>): Promise<void> {
    const before = link.sendsSettled;
    if (promise !== RESOLVED) return before === undefined ? promise : promise.then(() => before, (error: unknown) => before.then(() => Promise.reject(error)));
    if (before !== undefined) return before;
    if (!progressEngine.mustYield()) return RESOLVED;
    const putOff = nextTurn();
    const settled: Promise<void> = putOff.then(() => this.sendsSettledUpTo(link, settled));
    link.sendsSettled = settled;
    return putOff;
  }

  private sendsSettledUpTo(link: Link, settled: Promise<void>): void {
    if (link.sendsSettled === settled) link.sendsSettled = undefined;
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
    this.output(link, readyToSend(frame, call.id), undefined);
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
      receive.fail(callFailure(this.losses.failureFor(receive.route, receive.source, receive.destination) as Error, receive.describe()));
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
    const failure = this.losses.failureFor(receive.route, receive.source, receive.destination);
    if (failure !== undefined) {
      mailbox.remove(receive);
      receive.fail(callFailure(failure, receive.describe()));
      return;
    }
    this.calls.track(receive);
  }

  /** Resolves with the envelope of the earliest unmatched point-to-point message that fits, once there is one. */
  probe(route: Route, owner: CallOwner | undefined, destination: number, source: number, tag: number): Promise<ProbeResult> {
    const mailbox = this.mailbox(route.context, destination);
    const probe = new Probe(route, owner, destination, source, tag);
    const frame = route.failure === undefined ? mailbox.peek(source, probe) : undefined;
    if (frame !== undefined) return Promise.resolve({ source: frame.source, tag: frame.tag, bytes: frame.size });
    const failure = this.losses.failureFor(route, source, destination);
    if (failure !== undefined) return rejected(callFailure(failure, probe.describe()));
    mailbox.addProbe(probe);
    this.calls.track(probe);
    // Its caller waits for it (MPI_Probe): spin as a waiting receive does.
    progressEngine.wait(probe);
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
    const failure = this.losses.failureFor(route, ANY_SOURCE, destination);
    if (failure !== undefined) return rejected(callFailure(failure, probe.describe()));
    mailbox.addAlgorithmProbe(probe);
    this.calls.track(probe);
    return progressEngine.whenAwaited(probe, probe.promise);
  }

  /**
   * Collective call `tag` of `route` failed at member `rank` (`error`): its own pending part
   * fails, and every other member is told, so that none waits for data that will never come.
   */
  abortCollective(route: Route, rank: number, tag: number, signature: Signature, error: Error): void {
    this.abortCall(route.context, rank, tag, error);
    const notice = abortNotice(error, rank);
    for (let destination = 0; destination < route.endpoints.length; destination += 1) {
      if (destination === rank) continue;
      this.send(route, abortFrame(notice, route.context, rank, destination, tag, signature), SendMode.Borrowed, undefined, 'abort').catch(() => undefined);
    }
  }

  /**
   * `wait` (a member of a collective call waiting on shared memory for `wait.peer`) waits from now
   * on, failing as a receive from that member would: returns the failure at once if there is one
   * already, else tracks it (losses and aborts fail it) until `doneWaiting`.
   */
  waitShared(wait: SharedMemoryWait): Error | undefined {
    const failure = this.mailbox(wait.route.context, wait.destination).abortedCall(wait.callTag) ?? this.losses.failureFor(wait.route, wait.peer, wait.destination);
    if (failure !== undefined) return callFailure(failure, wait.describe());
    this.calls.track(wait);
    return undefined;
  }

  /** `wait` waits no more. */
  doneWaiting(wait: SharedMemoryWait): void {
    this.calls.untrack(wait);
  }

  /** Fails member `destination`'s part of collective call `tag` (now and when it gets there) and drops its messages. */
  private abortCall(context: number, destination: number, tag: number, error: Error): void {
    for (const call of this.calls.list()) {
      if (call instanceof SharedMemoryWait && call.route.context === context && call.destination === destination && call.callTag === tag) {
        this.calls.untrack(call);
        call.fail(error);
      }
    }
    const taken = this.mailbox(context, destination).abortCall(tag, error);
    // The call is over: receives its algorithm posted but had not awaited yet must not count as unhandled.
    for (const call of [...taken.receives, ...taken.probes]) {
      this.calls.untrack(call);
      call.fail(error);
      call.abandon();
    }
    for (const frame of taken.arrivals) this.dropUnmatched(frame);
    for (const link of this.links) {
      if (link === undefined) continue;
      for (const [id, receive] of link.awaitingData) {
        if (receive.route.context !== context || receive.destination !== destination || !receive.collective || receive.tagOrAny !== tag) continue;
        link.awaitingData.delete(id);
        this.calls.untrack(receive);
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
    if (frame.type === FrameType.ReadyToSend) this.output(link, clearToSend(frame), undefined);
    else this.returnCreditIfDue(link);
  }

  /** An unmatched message taken from its mailbox is dropped (see drop); a peer already gone is owed nothing. */
  private dropUnmatched(frame: Frame): void {
    const link = this.links[frame.peer] as Link;
    this.unqueued(link, frame);
    if (link.failure === undefined) this.drop(link, frame);
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
        this.calls.untrack(receive);
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
        this.losses.goodbyeFrom(link, lostNamedIn(frame));
        return;
      default:
        this.refused(peer, new FrameError('type', `a frame of unknown type ${String(frame.type)}`));
    }
  }

  /** `peer` sent a frame that cannot be right: the job counts it lost (see Losses.refused). */
  refused(peer: number, error: FrameError): void {
    this.losses.refused(peer, error);
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
    if (frame.type !== FrameType.Eager || !this.mayReceiveInto(frame) || this.routes.get(frame.context)?.failure !== undefined) return undefined;
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

  /** A device's doorbell rang for this thread (see DeviceHost.wokenUp). */
  wokenUp(): void {
    progressEngine.wokenUp();
  }

  private arrive(link: Link, frame: Frame): void {
    const route = this.routes.get(frame.context);
    const lie = route === undefined ? (frame.context === 0 ? new FrameError('context', 'a message of context 0, which no group has') : undefined) : this.envelopeLie(route, frame, link.peer);
    if (lie !== undefined) {
      this.refused(link.peer, lie);
      return;
    }
    if (route === undefined) this.awaitContext(link, frame.context);
    if (route?.failure !== undefined) {
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
      this.calls.untrack(receive);
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
      this.calls.track(receive);
      if (link.device.receiveInto !== undefined) {
        const memory = receive.destinationFor(frame.format, frame.size);
        if (memory !== undefined) link.device.receiveInto(link.peer, frame.id, memory);
      }
      this.output(link, clearToSend(frame), undefined);
      return;
    }
    if ((frame.flags & FLAG_SYNCHRONOUS) !== 0) this.output(link, ack(frame), undefined);
    else this.returnCreditIfDue(link);
    receive.complete(frame);
  }

  /** Past a quarter of the window, owed credit goes back in a frame of its own (no other frame may be going that way soon). */
  private returnCreditIfDue(link: Link): void {
    if (link.owed >= link.eagerRoom) this.output(link, creditReturn(), undefined);
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
    const data = rendezvousData(message, id);
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

  // ---- loss (losses.ts) and pending calls (pending-calls.ts) ----

  /** A device lost its link to `peer`. */
  lost(peer: number, error: Error): void {
    this.losses.lost(peer, error);
  }

  /** `peer` is lost, and with it its process (see Losses.markLost). */
  markLost(peer: number, error: Error): void {
    this.losses.markLost(peer, error);
  }

  /** This endpoint stops because a peer's loss failed one of its members (see Losses.leaveAfterLoss). */
  leaveAfterLoss(): void {
    this.losses.leaveAfterLoss();
  }

  /** Calls waiting now, oldest first (optionally only `owner`'s). */
  pending(owner?: CallOwner): PendingCall[] {
    return this.calls.list(owner);
  }

  /** The oldest pending call (for the watchdog). */
  oldestPending(): PendingCall | undefined {
    return this.calls.oldest();
  }

  /** Watchdog ticks (advanced by the master's watchdog timer); a pending call notes the tick it started waiting at. */
  get tick(): number {
    return this.calls.tick;
  }

  set tick(tick: number) {
    this.calls.tick = tick;
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
    this.losses.sayGoodbye();
    await Promise.all(
      this.allDevices.map((device) => {
        if (polls(device)) progressEngine.unregister(device);
        return device.close();
      }),
    );
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
