/**
 * The engine's records of calls in progress: receives, probes and sends. A record that has to
 * wait is linked into its engine's list of pending calls (pending-calls.ts), which is what a lost
 * peer fails, what the watchdog dumps and what a member returning from run() with a call in
 * flight is told about.
 */
import type { Frame } from '../../transport/frame.js';
import type { Mailbox } from './matching.js';
import type { Releasable } from '../../transport/device.js';

/** As a receive's or probe's source: a message from any member of the group (MPI_ANY_SOURCE). */
export const ANY_SOURCE = -1;
/** As a receive's or probe's `tag` option: a message with any tag (MPI_ANY_TAG). */
export const ANY_TAG = -1;

/** Whom a call belongs to: a member, counted so that one returning with calls in flight is named. */
export interface CallOwner {
  pendingCalls: number;
  /** "member Worker #0 of endpoint 3", for messages. */
  readonly label: string;
}

/** A group as an engine sees it: its context, name, the endpoint of every rank, and its mailboxes there (Engine.route makes it). */
export interface Route {
  readonly context: number;
  readonly name: string;
  /** Endpoint rank of each group rank. */
  readonly endpoints: Int32Array;
  /** This endpoint's mailboxes of the group, by receiving rank. */
  readonly mailboxes: (Mailbox | undefined)[];
  /** Set by the engine once an endpoint of the group is lost: the group is broken for good, and this is why. */
  failure: Error | undefined;
}

/** The list of pending calls (PendingCalls), told when a call settles from a device's callback or a mailbox. */
export interface CallTracker {
  untrack(call: PendingCall): void;
}

export abstract class PendingCall {
  /** Neighbours in the engine's list of pending calls (PendingCalls), in the order they started waiting. */
  previous: PendingCall | undefined;
  next: PendingCall | undefined;
  linked: boolean;
  /** Watchdog tick at which the call started waiting. */
  born: number;

  constructor(
    readonly route: Route,
    /** What the member called: 'receive', 'sendSync', 'broadcast', ... */
    readonly operation: string,
    readonly owner: CallOwner | undefined,
  ) {
    this.previous = undefined;
    this.next = undefined;
    this.linked = false;
    this.born = 0;
  }

  /** The other side, as a group rank (ANY_SOURCE for a wildcard receive). */
  abstract get peerRank(): number;
  abstract get tag(): number;
  /** 'to', 'from', 'for': how the operation relates to the peer, for messages. */
  abstract get direction(): string;
  abstract fail(error: Error): void;

  /** Nobody will await this call any more: a later failure must not count as an unhandled rejection. */
  abstract abandon(): void;

  /** "receive from rank 1 of group 'g'". */
  describe(): string {
    const peer = this.peerRank === ANY_SOURCE ? 'any rank' : `rank ${this.peerRank}`;
    return `${this.operation} ${this.direction} ${peer} of group '${this.route.name}'`;
  }

  /** describe() with the tag and the member, for diagnostics. */
  details(): string {
    const tag = this.tag === ANY_TAG ? 'any tag' : `tag ${this.tag}`;
    return `${this.describe()} (${tag})${this.owner ? `, ${this.owner.label}` : ''}`;
  }
}

/** A call that waits at a mailbox for a point-to-point or collective message: a receive or a probe. */
export abstract class MailboxCall extends PendingCall {
  constructor(
    route: Route,
    operation: string,
    owner: CallOwner | undefined,
    /** Group rank of the receiving member. */
    readonly destination: number,
    /** Group rank of the sender, or ANY_SOURCE. */
    readonly source: number,
    readonly tagOrAny: number,
  ) {
    super(route, operation, owner);
  }

  get peerRank(): number {
    return this.source;
  }

  get tag(): number {
    return this.tagOrAny;
  }

  /** True when a point-to-point frame fits this call's tag. */
  acceptsTag(tag: number): boolean {
    return this.tagOrAny === ANY_TAG || this.tagOrAny === tag;
  }
}

/**
 * A posted receive. The caller sets what it matches (`source` and `tag` may be wildcards for
 * point-to-point receives); the engine calls `complete` once with the message's frame, or `fail`.
 */
export abstract class Receive extends MailboxCall {
  /** Post order, so that a specific and a wildcard receive compete fairly. */
  stamp: number;

  constructor(
    route: Route,
    operation: string,
    owner: CallOwner | undefined,
    destination: number,
    source: number,
    tagOrAny: number,
    /** Collective traffic (the tag is an operation counter; wildcards never match it). */
    readonly collective: boolean,
  ) {
    super(route, operation, owner, destination, source, tagOrAny);
    this.stamp = 0;
  }

  get direction(): string {
    return 'from';
  }

  /** The message is here: `frame` holds its envelope, signature, format and bodies. */
  abstract complete(frame: Frame): void;

  /** Memory this receive wants a message's one binary body of `bytes` (format below 256) read into, if any. */
  destinationFor(_format: number, _bytes: number): Uint8Array | undefined {
    return undefined;
  }
}

/** What a probe reports: the envelope and size of a message that has arrived and waits. */
export interface ProbeResult {
  /** The sender's rank in the group. */
  readonly source: number;
  /** The message's tag. */
  readonly tag: number;
  /** The size of the message as it travels (serialized), in bytes. */
  readonly bytes: number;
}

export class Probe extends MailboxCall {
  tracker: CallTracker | undefined;
  private settle: { resolve: (result: ProbeResult) => void; reject: (error: Error) => void } | undefined;
  readonly promise: Promise<ProbeResult>;

  constructor(route: Route, owner: CallOwner | undefined, destination: number, source: number, tagOrAny: number) {
    super(route, 'probe', owner, destination, source, tagOrAny);
    this.promise = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  get direction(): string {
    return 'for';
  }

  matches(frame: Frame): boolean {
    return (this.source === ANY_SOURCE || this.source === frame.source) && this.acceptsTag(frame.tag);
  }

  found(frame: Frame): void {
    this.tracker?.untrack(this);
    this.settle?.resolve({ source: frame.source, tag: frame.tag, bytes: frame.size });
  }

  fail(error: Error): void {
    this.settle?.reject(error);
  }

  abandon(): void {
    this.promise.catch(() => undefined);
  }
}

/**
 * A non-root that could not choose the algorithm itself (it does not know the root's size) waits
 * for the first message of its collective call that names one; resolves with its operation code.
 */
export class AlgorithmProbe extends MailboxCall {
  tracker: CallTracker | undefined;
  private settle: { resolve: (operation: number) => void; reject: (error: Error) => void } | undefined;
  readonly promise: Promise<number>;

  constructor(route: Route, operation: string, owner: CallOwner | undefined, destination: number, tag: number) {
    super(route, operation, owner, destination, ANY_SOURCE, tag);
    this.promise = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  get direction(): string {
    return 'for the algorithm from';
  }

  found(frame: Frame): void {
    this.tracker?.untrack(this);
    this.settle?.resolve(frame.operation);
  }

  fail(error: Error): void {
    this.settle?.reject(error);
  }

  abandon(): void {
    this.promise.catch(() => undefined);
  }
}

/** How long a send keeps the caller waiting (see SendCall). */
export const enum SendMode {
  /** sendAsync: until the value is captured (copied or handed to the device); never for its receive. */
  Captured = 0,
  /** sendSync: until the receive has taken the message. */
  Synchronous = 1,
  /** Collectives: until the value's buffers may be reused (MPI_Isend); saves the copy. */
  Borrowed = 2,
}

/** A send that could not finish inside the call: waiting for credit, an ACK, a clearance or its release. */
export class SendCall extends PendingCall implements Releasable {
  tracker: CallTracker | undefined;
  private settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private promiseValue: Promise<void> | undefined;
  /** Protocol id (Ack, ClearToSend and Data echo it). */
  id = 0;
  /** Events still needed before the caller may go on. */
  awaitingAck = false;
  awaitingRelease = false;
  /** The caller's promise is settled (its data may still be in flight, e.g. detached). */
  finished = false;
  /** The bodies were copied, so the caller's own buffers are free (sendAsync above the eager limit). */
  detached = false;
  /** The data went out; the bodies are the device's business now. */
  transmitted = false;
  /** A sendAsync whose caller spins for its clearance: its announced data is not copied before the spin ends (see Engine.send). */
  lendingWhileSpinning = false;
  /** Pooled memory of the detached copy, given back once its data went out (see CopyPool). */
  copies: readonly ArrayBuffer[] = [];

  constructor(
    route: Route,
    operation: string,
    owner: CallOwner | undefined,
    readonly frame: Frame,
    readonly mode: SendMode,
    /** Endpoint rank of the receiver. */
    readonly peer: number,
  ) {
    super(route, operation, owner);
  }

  get peerRank(): number {
    return this.frame.destination;
  }

  get tag(): number {
    return this.frame.tag;
  }

  get direction(): string {
    return 'to';
  }

  get promise(): Promise<void> {
    if (this.promiseValue === undefined) {
      this.promiseValue = this.finished ? RESOLVED : new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    }
    return this.promiseValue;
  }

  /** The device is done with the bodies. */
  released(): void {
    this.awaitingRelease = false;
    this.settleIfDone();
  }

  acknowledged(): void {
    this.awaitingAck = false;
    this.settleIfDone();
  }

  settleIfDone(): void {
    if (this.finished || this.awaitingAck || this.awaitingRelease) return;
    this.finish();
  }

  /** The caller may go on (whatever the engine still does with a detached copy). */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.tracker?.untrack(this);
    this.settle?.resolve();
  }

  fail(error: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.tracker?.untrack(this);
    if (this.settle) this.settle.reject(error);
    else this.promiseValue = rejected(error);
  }

  abandon(): void {
    this.promise.catch(() => undefined);
  }
}

/** One resolved promise for every call that completes at once. */
export const RESOLVED: Promise<void> = Promise.resolve();

/** A rejected promise that counts as handled until someone awaits it. */
export function rejected<T>(error: Error): Promise<T> {
  const promise = Promise.reject(error);
  promise.catch(() => undefined);
  return promise;
}

/**
 * A collective call's member waiting on shared memory (a collective segment's flags) for another
 * member of its group: no message will complete it, but it fails like one that waits for a
 * message from that member (its loss, its group broken, the call aborted elsewhere), so the
 * engine tracks it as a pending call (Engine.waitShared). Who it waits for changes as it goes.
 */
export class SharedMemoryWait extends PendingCall {
  /** The group rank waited for now. */
  peer: number;
  /** Why it failed, once it did. */
  failure: Error | undefined;
  /** Told once it fails (to stop a sleep). */
  onFail: ((error: Error) => void) | undefined;

  constructor(
    route: Route,
    operation: string,
    owner: CallOwner | undefined,
    /** Group rank of the waiting member. */
    readonly destination: number,
    /** The collective call's tag. */
    readonly callTag: number,
  ) {
    super(route, operation, owner);
    this.peer = destination;
    this.failure = undefined;
    this.onFail = undefined;
  }

  get peerRank(): number {
    return this.peer;
  }

  get tag(): number {
    return this.callTag;
  }

  get direction(): string {
    return 'for';
  }

  fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.onFail?.(error);
  }

  abandon(): void {}
}
