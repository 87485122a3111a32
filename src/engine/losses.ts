/**
 * Peers that go, at one endpoint, as in ULFM. A peer a device saw go is suspected: nothing more
 * is written to it, and after a grace its loss is confirmed; then every call that needs its
 * process fails, and every group that contains it is broken for good. A peer that said goodbye
 * closed on purpose: the calls that need it fail, its groups stay whole. Closing, this endpoint
 * says goodbye on every link, naming the first endpoint it knew lost.
 */
import { goodbye } from '../../transport/frame.js';
import type { Frame } from '../../transport/frame.js';
import { ANY_SOURCE, AlgorithmProbe, MailboxCall, Probe, Receive } from './calls.js';
import type { PendingCall, Route } from './calls.js';
import type { Link } from './link.js';
import type { PendingCalls } from './pending-calls.js';
import { BadFrameError, PeerLostError } from '../base/errors.js';
import type { FrameError } from '../base/errors.js';

/**
 * How long a loss a device saw waits before it fails calls and breaks groups: the word on why the
 * peer went (its goodbye naming an earlier loss, the job's abort, the heartbeats' verdict on
 * another process) travels other ways and may come just after, and must win, so that survivors
 * name the process that was lost, not one that stopped because of it.
 */
const LOSS_GRACE_MS = 250;

/** How endpoints are named: this one's rank, each one's process, each one's label in messages. */
export interface EndpointNames {
  /** This endpoint's rank. */
  readonly rank: number;
  /** The process of each endpoint, for PeerLostError. */
  readonly processOf: (endpoint: number) => number;
  /** How messages name an endpoint ("process 1", "endpoint 3 (process 1, thread 1)"). */
  readonly labelOf: (endpoint: number) => string;
}

/** What loss handling asks of the engine that runs the protocol over the links. */
export interface LossHost {
  /** Sends a control frame to `link`'s peer (dropped once the peer is gone). */
  output(link: Link, frame: Frame): void;
  /** Copied data of a send that will never go out no longer counts against sendBuffer. */
  detachedDone(size: number): void;
  /** An unmatched message of a broken group leaves its mailbox; a sender still here gets its credit back. */
  dropUnmatched(frame: Frame): void;
  /** A peer's loss is confirmed (never said of a peer that closed on purpose). */
  peerLost(peer: number, error: PeerLostError): void;
}

export class Losses {
  /** The first endpoint this one knew lost, named in its goodbyes. */
  private firstLost: number | undefined;
  /** This endpoint said goodbye: a link that goes from now on is no loss. */
  private closing = false;

  constructor(
    private readonly names: EndpointNames,
    /** The engine's links, by peer endpoint. */
    private readonly links: readonly (Link | undefined)[],
    /** Every group's route here, by context: a loss breaks those that contain the lost endpoint. */
    private readonly routes: ReadonlyMap<number, Route>,
    private readonly calls: PendingCalls,
    private readonly host: LossHost,
  ) {}

  /** A device lost its link to `peer`. */
  lost(peer: number, error: Error): void {
    const link = this.links[peer];
    if (link === undefined || link.failure !== undefined) return;
    const processRank = this.names.processOf(peer);
    const endpoint = this.names.labelOf(peer);
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
      this.host.peerLost(peer, loss);
    }, LOSS_GRACE_MS).unref();
  }

  /**
   * `peer` sent a frame that cannot be right (`error`): its fault, not the link's, so its loss
   * needs no grace. It hears the verdict first, on the link itself (a goodbye naming it), so that
   * it does not take this endpoint for lost; the job hears it through peerLost (the coordinator).
   */
  refused(peer: number, error: FrameError): void {
    const link = this.links[peer];
    if (link === undefined || link.failure !== undefined) return;
    const { labelOf, processOf, rank } = this.names;
    const verdict = new BadFrameError(`${labelOf(peer)} sent ${labelOf(rank)} a frame that cannot be right, so it counts as lost (${error.field}: ${error.message})`, processOf(peer), error.field, { cause: error, endpointRank: peer });
    this.host.output(link, goodbye(peer));
    this.markLost(peer, verdict);
    this.host.peerLost(peer, verdict);
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
    const processRank = this.names.processOf(peer);
    for (const sibling of this.links) {
      if (sibling === undefined || sibling.lost || sibling.goodbye || sibling.peer === this.names.rank || this.names.processOf(sibling.peer) !== processRank) continue;
      sibling.lost = true;
      sibling.failure ??= error instanceof PeerLostError ? new PeerLostError(`${this.names.labelOf(sibling.peer)} was lost with its process: ${error.message}`, processRank, { cause: error, endpointRank: sibling.peer }) : error;
      fallen.push(sibling);
    }
    if (error instanceof PeerLostError) this.firstLost ??= peer;
    const broken = [...this.routes.values()].filter((route) => route.failure === undefined && fallen.some((lost) => route.endpoints.includes(lost.peer)));
    for (const route of broken) route.failure = error;
    for (const call of this.calls.list()) {
      const failure = this.failureOf(call);
      if (failure === undefined) continue;
      this.failPending(call, failure);
      // An algorithm that failed on one of its receives never awaits the others it had posted.
      if (call.route.failure !== undefined) call.abandon();
    }
    for (const lost of fallen) this.release(lost);
    for (const route of broken) this.forgetRoute(route);
  }

  /**
   * `link`'s peer said goodbye. A peer that closes after a loss names it (`lost`), so that a call
   * here which waited for that peer fails naming the lost process, not the peer that merely closed.
   */
  goodbyeFrom(link: Link, lost: number | undefined): void {
    // A peer that names itself was dropped by another for a bad frame (refusedBy): it leaves as a lost process, not on purpose.
    if (lost === link.peer) {
      this.reportedLost(lost, `another endpoint refused a frame from it, as it said when it closed`);
      return;
    }
    link.goodbye = true;
    if (lost === this.names.rank) this.refusedBy(link.peer);
    else if (lost !== undefined) this.reportedLost(lost, `as ${this.names.labelOf(link.peer)} said when it closed`);
  }

  /** A Goodbye on every link to another endpoint, naming the first endpoint this one knew lost. */
  sayGoodbye(): void {
    this.closing = true;
    for (const link of this.links) {
      if (link && link.peer !== this.names.rank) this.host.output(link, goodbye(this.firstLost));
    }
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

  /**
   * The failure a call on `route` with `source` (a rank or ANY_SOURCE) meets, if any: its broken
   * group's (but a call to an endpoint of the lost process names that endpoint), else its peer's.
   * A wildcard call of member `receiver` fails only once no other member could still send to it:
   * each has closed (finished normally) or is gone; while one is left, what it sends may come.
   */
  failureFor(route: Route, source: number, receiver: number): Error | undefined {
    const broken = route.failure;
    if (source !== ANY_SOURCE) {
      const direct = this.gone(this.links[route.endpoints[source] as number]);
      if (broken === undefined) return direct;
      return direct instanceof PeerLostError && broken instanceof PeerLostError && direct.processRank === broken.processRank ? direct : broken;
    }
    return broken ?? this.noSenderLeft(route, receiver);
  }

  /** failureFor a pending call. */
  failureOf(call: PendingCall): Error | undefined {
    return this.failureFor(call.route, call.peerRank, call instanceof MailboxCall ? call.destination : ANY_SOURCE);
  }

  /**
   * Why no member of `route` but `receiver` is left to send, when none is (a group of one keeps
   * its member, which may send to itself; members of this endpoint are here while it is).
   */
  private noSenderLeft(route: Route, receiver: number): Error | undefined {
    const gone: PeerLostError[] = [];
    for (let rank = 0; rank < route.endpoints.length; rank += 1) {
      if (rank === receiver) continue;
      const failure = this.gone(this.links[route.endpoints[rank] as number]);
      if (!(failure instanceof PeerLostError)) return failure;
      gone.push(failure);
    }
    const last = gone.at(-1);
    if (last === undefined) return undefined;
    const reasons = gone.map((failure) => failure.message).join('; ');
    return new PeerLostError(`no other member of the group is left to send (${reasons})`, last.processRank, { endpointRank: last.endpointRank });
  }

  /** `link`'s peer closed (or this endpoint did): calls that need it fail; its groups stay whole. */
  private markClosed(link: Link, error: PeerLostError): void {
    link.goodbye = true;
    link.failure = error;
    for (const call of this.calls.list()) {
      const failure = this.failureOf(call);
      if (failure !== undefined) this.failPending(call, failure);
    }
    this.release(link);
  }

  /**
   * `reporter` refused a frame of this endpoint (a goodbye naming its receiver, see refused): the
   * job counts this endpoint's process as lost, so every call here fails, naming it.
   */
  private refusedBy(reporter: number): void {
    const { labelOf, processOf, rank } = this.names;
    const loss = new PeerLostError(`${labelOf(rank)} was dropped by ${labelOf(reporter)}, which refused a frame from it as one that cannot be right (its error says what was wrong)`, processOf(rank), { endpointRank: rank });
    this.markLost(rank, loss);
    this.host.peerLost(rank, loss);
  }

  /** A peer closing named `peer` lost (see goodbyeFrom); `how` says who said so, for the message. */
  private reportedLost(peer: number, how: string): void {
    if (this.links[peer]?.lost !== false || this.names.processOf(peer) === this.names.processOf(this.names.rank)) return;
    const loss = new PeerLostError(`${this.names.labelOf(peer)} was lost (${how})`, this.names.processOf(peer), { endpointRank: peer });
    this.markLost(peer, loss);
    this.host.peerLost(peer, loss);
  }

  private failPending(call: PendingCall, failure: Error): void {
    if (call instanceof Receive || call instanceof Probe || call instanceof AlgorithmProbe) call.route.mailboxes[call.destination]?.remove(call);
    this.calls.untrack(call);
    call.fail(callFailure(failure, call.describe()));
  }

  /** Drops what `link` still held for a peer that is gone. */
  private release(link: Link): void {
    for (const call of link.awaitingClearance.values()) if (call.detached) this.host.detachedDone(call.frame.size);
    link.blocked.removeWhere(() => true);
    link.awaitingAck.clear();
    link.awaitingClearance.clear();
    link.awaitingData.clear();
    link.device.disconnect(link.peer);
  }

  /**
   * A broken group's traffic with the survivors stops: sends of it waiting for them are dropped,
   * and its unmatched messages here give their credit back (later ones are dropped as they come,
   * see Engine.arrive), so that the survivors' other groups keep their flow.
   */
  private forgetRoute(route: Route): void {
    const ofRoute = (call: { route: Route }) => call.route === route;
    for (const link of this.links) {
      if (link === undefined || link.failure !== undefined) continue;
      link.blocked.removeWhere(ofRoute);
      for (const [id, call] of link.awaitingClearance) {
        if (!ofRoute(call)) continue;
        link.awaitingClearance.delete(id);
        if (call.detached) this.host.detachedDone(call.frame.size);
      }
      for (const [id, call] of link.awaitingAck) if (ofRoute(call)) link.awaitingAck.delete(id);
      for (const [id, receive] of link.awaitingData) if (ofRoute(receive)) link.awaitingData.delete(id);
    }
    for (const mailbox of route.mailboxes) {
      for (const frame of mailbox?.takeUnmatched() ?? []) this.host.dropUnmatched(frame);
    }
  }

  /** Why `link`'s peer is gone, once it is for sure: lost, or closed (a loss a device saw waits for its grace). */
  private gone(link: Link | undefined): Error | undefined {
    return link !== undefined && (link.lost || link.goodbye) ? link.failure : undefined;
  }
}

/** `error` restated in terms of one call ("receive from rank 1 of group 'g' failed: ..."). */
export function callFailure(error: Error, call: string): Error {
  if (error instanceof BadFrameError) return new BadFrameError(`${call} failed: ${error.message}`, error.processRank, error.field, { cause: error, endpointRank: error.endpointRank });
  if (!(error instanceof PeerLostError)) return error;
  return new PeerLostError(`${call} failed: ${error.message}`, error.processRank, { cause: error, endpointRank: error.endpointRank });
}
