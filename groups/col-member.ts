/**
 * The application's unit of parallelism (CCJ 2): subclass ColMember, implement run(), add the
 * member to groups, start() it. Every communication call is a method of the member, as in CCJ.
 * The member's bookkeeping lives in a MemberCore behind an ES private field, so subclasses may
 * use any field names of their own.
 */
import type { ColGroup } from './col-group.js';
import { CCJError, GroupError } from '../src/base/errors.js';
import { ANY_SOURCE, ANY_TAG, SendMode } from '../src/engine/calls.js';
import type { CallOwner, ProbeResult } from '../src/engine/calls.js';
import { Delivery, MemberReceive, POINT_TO_POINT, messageFrame, receiveBuffer, receiveTag, sendTag } from '../src/engine/messages.js';
import * as collectives from '../src/collectives/operations.js';
import type { CollectiveOptions } from '../src/collectives/operations.js';
import type { Endpoint } from '../src/collectives/endpoint.js';
import type { ReductionLike } from '../reduction/reduction-object.js';
import type { DividableData } from '../dividable/dividable-data.js';
import { TracedReceive } from '../src/runtime/trace-file.js';
import type { TraceFile } from '../src/runtime/trace-file.js';

export { ANY_SOURCE, ANY_TAG };

/** Collective operation counters run 1..2^31−1 and wrap: a job may run collectives forever. */
const TAG_LIMIT = 0x7fff_ffff;

export function nextOperationCounter(previous: number): number {
  return (previous % TAG_LIMIT) + 1;
}

/** Options of point-to-point calls. */
export interface MessageOptions {
  /** An integer 0..2^31−1 (default 0); receives and probes may pass {@link ANY_TAG}. */
  readonly tag?: number;
}

/** Options of receives. */
export interface ReceiveOptions extends MessageOptions {
  /**
   * Memory to receive a binary message into (mpi4py's `Recv(buffer)`): a typed array, Buffer or
   * DataView at least as large as the message. The receive resolves with a view of the same kind
   * over its first bytes, the message's; over shared memory and UCX the data is read straight into it.
   * Anything else than binary data that fits is a {@link ReceiveBufferError}.
   */
  readonly into?: ArrayBufferView;
}

/** What receiveMessage resolves with: the value and where it came from. */
export interface ReceivedMessage<T> {
  /** The object received. */
  readonly value: T;
  /** The sender's rank in the group. */
  readonly source: number;
  /** The tag it was sent with. */
  readonly tag: number;
}

/** RangeError unless `source` is a rank of `group` or ANY_SOURCE. */
function checkSource(group: ColGroup, source: number, operation: string): void {
  if (source !== ANY_SOURCE) group.checkRank(source, operation, 'source');
}

/** The endpoint as a member's calls use it: its point-to-point calls are traced too. */
export interface MemberEndpoint extends Endpoint {
  readonly traceFile: TraceFile | undefined;
}

/** What a member needs of the master it was added to (ColGroupMaster). */
export interface MemberMaster {
  readonly endpoint: MemberEndpoint;
  /** An exception escaped the member's run(). */
  memberFailed(member: ColMember, error: unknown): Promise<void>;
  /** The member returned from run() or called done(). */
  memberDone(member: ColMember): Promise<void>;
}

/**
 * What the library keeps about a member; reached through `memberCore(member)`. The collectives
 * see it as their CollectiveMember (src/collectives/participants.ts).
 */
export class MemberCore implements CallOwner {
  private masterRef: MemberMaster | undefined;
  /** The master's endpoint, held from the moment the member is first added. */
  private endpointRef: MemberEndpoint | undefined;
  /** The member's id within its endpoint: the order in which it was first added. */
  localId = -1;
  started: Promise<void> | undefined;
  finished = false;
  /** Engine calls of this member still waiting (a run() returning with some forgot an await). */
  pendingCalls = 0;
  private readonly collectiveCounters = new Map<number, number>();
  /** The group of the last call and this member's rank in it (groups are immutable). */
  private lastGroup: ColGroup | undefined;
  private lastRank = -1;

  constructor(readonly member: ColMember) {}

  get name(): string {
    return this.member.constructor.name;
  }

  /** "member Worker #0 of process 1", for messages. */
  get label(): string {
    return `member ${this.name} #${this.localId}${this.endpointRef ? ` of ${this.endpointRef.label}` : ''}`;
  }

  get isRunning(): boolean {
    return this.started !== undefined && !this.finished;
  }

  attach(master: MemberMaster, localId: number): void {
    if (this.masterRef !== undefined && this.masterRef !== master) {
      throw new GroupError(`${this.name} already belongs to another ColGroupMaster`);
    }
    if (this.masterRef === undefined) {
      this.masterRef = master;
      this.endpointRef = master.endpoint;
      this.localId = localId;
    }
  }

  master(operation: string): MemberMaster {
    return this.masterRef ?? this.neverAdded(operation);
  }

  endpoint(operation: string): MemberEndpoint {
    return this.endpointRef ?? this.neverAdded(operation);
  }

  /**
   * run() returned: a call of the member still waiting means an await was forgotten. Once named
   * here, such a call failing later (its peer closing) is no unhandled rejection.
   */
  returned(): void {
    if (this.pendingCalls === 0) return;
    const calls = this.endpoint('start()').engine.pending(this);
    for (const call of calls) call.abandon();
    process.stderr.write(`ccjs: ${this.label} returned from run() with ${calls.length} call(s) still pending (a missing await?):${calls.map((call) => `\n  - ${call.details()}`).join('')}\n`);
  }

  /** This member's rank in `group`; GroupError naming the call if it is not a member. */
  rankIn(group: ColGroup, operation: string): number {
    if (group === this.lastGroup) return this.lastRank;
    this.endpoint(operation);
    const rank = group.rankOf(this.member);
    if (rank < 0) throw new GroupError(`${operation}: ${this.name} is not a member of group '${group.name}'`);
    this.lastGroup = group;
    this.lastRank = rank;
    return rank;
  }

  /** The tag of this member's next collective operation on `group` (CCJ 3.1); wraps, never overflows. */
  nextCollectiveTag(group: ColGroup): number {
    const count = nextOperationCounter(this.collectiveCounters.get(group.context) ?? 0);
    this.collectiveCounters.set(group.context, count);
    return count;
  }

  /** Starts a point-to-point send of `value` (see SendMode). */
  send(group: ColGroup, destination: number, value: unknown, mode: SendMode, operation: string, options: MessageOptions | undefined): Promise<void> {
    const source = this.rankIn(group, operation);
    group.checkRank(destination, operation, 'destination');
    const tag = sendTag(options, operation);
    const { engine, serializer, traceFile } = this.endpoint(operation);
    const started = traceFile === undefined ? 0 : traceFile.now();
    const frame = messageFrame(serializer, value, 0, group.context, source, destination, tag, POINT_TO_POINT);
    const sent = engine.send(group.route, frame, mode, this, operation);
    return traceFile === undefined ? sent : traceFile.send(sent, started, { operation, group: group.name, rank: source, peer: destination, tag, bytes: frame.size });
  }

  /** Posts a point-to-point receive; its `result()` is the caller's promise. */
  postReceive(group: ColGroup, source: number, operation: string, options: ReceiveOptions | undefined, delivery: Delivery): MemberReceive {
    const destination = this.rankIn(group, operation);
    checkSource(group, source, operation);
    const tag = receiveTag(options, operation);
    const into = receiveBuffer(options, operation);
    const { engine, serializer, traceFile } = this.endpoint(operation);
    const receive = traceFile
      ? new TracedReceive(traceFile, group.route, operation, this, destination, source, tag, serializer, delivery, into)
      : new MemberReceive(group.route, operation, this, destination, source, tag, serializer, delivery, undefined, into);
    engine.post(receive);
    return receive;
  }

  probe(group: ColGroup, source: number, options: MessageOptions | undefined): Promise<ProbeResult> {
    const destination = this.rankIn(group, 'probe');
    checkSource(group, source, 'probe');
    return this.endpoint('probe').engine.probe(group.route, this, destination, source, receiveTag(options, 'probe'));
  }

  private neverAdded(operation: string): never {
    throw new CCJError(`${operation}: ${this.name} was never added to a group (call ColGroupMaster.addMember first)`);
  }
}

let coreOf: (member: ColMember) => MemberCore;

/** @internal The library's bookkeeping for `member`. */
export function memberCore(member: ColMember): MemberCore {
  return coreOf(member);
}

/**
 * The application's unit of parallelism (CCJ's ColMember): subclass it, implement
 * {@link ColMember.run}, add the member to groups with {@link ColGroupMaster.addMember}, then
 * {@link ColMember.start} it. Every communication call is a method of the member and names a
 * group and ranks in it; every one returns a Promise.
 *
 * Arguments are checked before anything is sent: a bad one rejects the call's promise with a
 * TypeError or RangeError naming it; a member that is not in the group gets a {@link GroupError}.
 * A call that needs a lost process rejects with {@link PeerLostError}; after another endpoint
 * aborted the job (with `abortOnError: false`), with {@link AbortError}.
 */
export abstract class ColMember {
  readonly #core = new MemberCore(this);

  static {
    coreOf = (member) => member.#core;
  }

  /**
   * The member's own code, run by {@link ColMember.start}. Returning from it implies
   * {@link ColMember.done}; an exception escaping it aborts the whole job, naming the member
   * (unless `abortOnError` is false: then `start()` rejects with it).
   */
  abstract run(): Promise<void>;

  /**
   * Runs {@link ColMember.run} as this member's own thread of control; resolves when it returns.
   * Calling it again returns the same promise.
   *
   * @throws {@link CCJError} if the member was never added to a group.
   */
  start(): Promise<void> {
    const core = this.#core;
    const master = core.master('start()');
    core.started ??= (async () => {
      try {
        await this.run();
      } catch (error) {
        await master.memberFailed(this, error);
        throw error;
      }
      core.returned();
      await this.done();
    })();
    return core.started;
  }

  /**
   * De-registers the member; once every member of the endpoint is done, the master closes (with
   * `autoClose`, the default). Returning from run() calls it; idempotent.
   *
   * @throws {@link CCJError} (rejects) if the member was never added to a group.
   */
  async done(): Promise<void> {
    const core = this.#core;
    if (core.finished) return;
    core.finished = true;
    await core.master('done()').memberDone(this);
  }

  // ---- point-to-point (CCJ 2.2, with MPI's tags and wildcards) ----
  // Argument errors reject the returned promise (TypeError/RangeError) before anything is sent.

  /**
   * Sends `object` to rank `destination` of `group` and resolves once the receiver's receive has
   * taken it (CCJ's synchronous send).
   *
   * @throws {RangeError} (rejects) for a destination outside the group or a bad tag.
   * @throws {@link SerializationError} (rejects) if `object` cannot be encoded.
   */
  sendSync(group: ColGroup, object: unknown, destination: number, options?: MessageOptions): Promise<void> {
    try {
      return this.#core.send(group, destination, object, SendMode.Synchronous, 'sendSync', options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Sends `object` to rank `destination` of `group`; resolves once the object is captured (encoded
   * or copied), so the caller may change it, and handed to the transport. It never waits for the
   * matching receive, but it does wait while the receiver's window is full (flow control).
   *
   * @throws {RangeError} (rejects) for a destination outside the group or a bad tag.
   * @throws {@link SerializationError} (rejects) if `object` cannot be encoded.
   */
  sendAsync(group: ColGroup, object: unknown, destination: number, options?: MessageOptions): Promise<void> {
    try {
      return this.#core.send(group, destination, object, SendMode.Captured, 'sendAsync', options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Receives the earliest-sent message from rank `source` (or the earliest-arrived from
   * {@link ANY_SOURCE}) whose tag fits `options.tag` (default 0, or {@link ANY_TAG}). Messages from
   * one member to another in one group never overtake each other.
   *
   * With `options.into`, a binary message lands in that buffer (see {@link ReceiveOptions.into}).
   *
   * @typeParam T - what the caller expects; not checked.
   * @throws {RangeError} (rejects) for a source outside the group or a bad tag.
   * @throws {TypeError} (rejects) for an `into` that is not a typed array, Buffer or DataView.
   * @throws {@link SerializationError} (rejects) if the message cannot be decoded here.
   * @throws {@link ReceiveBufferError} (rejects) if the message cannot go into `options.into`.
   */
  receive<T>(group: ColGroup, source: number, options?: ReceiveOptions): Promise<T> {
    try {
      return this.#core.postReceive(group, source, 'receive', options, Delivery.Value).result<T>(true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Like {@link ColMember.receive}, with the envelope: `{ value, source, tag }`, for receives from
   * {@link ANY_SOURCE} or with {@link ANY_TAG}.
   *
   * @throws {RangeError} (rejects) for a source outside the group or a bad tag.
   */
  receiveMessage<T>(group: ColGroup, source: number, options?: ReceiveOptions): Promise<ReceivedMessage<T>> {
    try {
      return this.#core.postReceive(group, source, 'receiveMessage', options, Delivery.Envelope).result<ReceivedMessage<T>>(true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Waits for a message that a receive with the same arguments would take, and resolves with its
   * envelope and size without receiving it (MPI_Probe).
   *
   * @throws {RangeError} (rejects) for a source outside the group or a bad tag.
   */
  probe(group: ColGroup, source: number, options?: MessageOptions): Promise<ProbeResult> {
    try {
      return this.#core.probe(group, source, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Sends `object` to `destination` and receives from `source` at the same time (MPI_Sendrecv), so
   * that members exchanging in a ring cannot deadlock; `options.tag` applies to both.
   *
   * @returns what `source` sent.
   * @throws {RangeError} (rejects) for a rank outside the group or a bad tag.
   */
  async sendReceive<T>(group: ColGroup, object: unknown, destination: number, source: number, options?: MessageOptions): Promise<T> {
    const core = this.#core;
    // Posted first, so that both sides of an exchange can send at once; waited for once sent.
    const receive = core.postReceive(group, source, 'sendReceive', options, Delivery.Value);
    const sent = core.send(group, destination, object, SendMode.Captured, 'sendReceive', options);
    const [, value] = await Promise.all([sent, receive.result<T>(true)]);
    return value;
  }

  /**
   * Exchanges objects with `peer` (CCJ's rendezvous): both sides call it and get the other's object.
   *
   * @throws {RangeError} (rejects) for a peer outside the group or a bad tag.
   */
  rendezvous<T>(group: ColGroup, object: unknown, peer: number, options?: MessageOptions): Promise<T> {
    return this.sendReceive<T>(group, object, peer, peer, options);
  }

  // ---- collectives (CCJ 2.3, plus MPI's allToAll, reduceScatter and scan) ----
  // Members of a group must call them in the same order with the same root and reduction; a member
  // that called something else gets a CollectiveMismatchError naming both calls.
  // `options.algorithm` picks an algorithm by name (see src/collectives/algorithms.ts).

  /**
   * Resolves once every member of `group` has called it.
   *
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective.
   */
  barrier(group: ColGroup, options?: CollectiveOptions<'barrier'>): Promise<void> {
    return collectives.barrier(this.#core, group, options);
  }

  /**
   * Sends the root's `object` to every member: the root gets its own reference back, the others a
   * copy. Non-roots' `object` is not sent: pass null. Where the selection table depends on the
   * size, they run the algorithm the root chose.
   *
   * @throws {RangeError} (rejects) for a root outside the group.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective or root.
   */
  broadcast<T>(group: ColGroup, object: T, root: number, options?: CollectiveOptions<'broadcast'>): Promise<T> {
    return collectives.broadcast(this.#core, group, object, root, options);
  }

  /**
   * Combines every member's `data` with `op` (see {@link Reductions}) at the root; the others get
   * null. A non-commutative `op` (`commutative: false`) is combined in rank order. Inputs are never
   * modified.
   *
   * @throws {TypeError} (rejects) if `op` is neither a function nor a {@link ReductionObject}.
   * @throws {RangeError} (rejects) for a root outside the group.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective, root or reduction.
   * @typeParam T - the type of `data` and of the result.
   * @typeParam D - the type `op` combines, which `T` must be (a `ReductionObject<Float64Array>` takes a
   *   `new Float64Array(n)`, whose buffer type is narrower).
   */
  reduce<T extends D, D = T>(group: ColGroup, data: T, op: ReductionLike<D>, root: number, options?: CollectiveOptions<'reduce'>): Promise<T | null> {
    return collectives.reduce(this.#core, group, data, op, root, options);
  }

  /**
   * Combines every member's `data` with `op`; every member gets the result.
   *
   * @throws {TypeError} (rejects) if `op` is neither a function nor a {@link ReductionObject}.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective or reduction.
   * @typeParam T - the type of `data` and of the result.
   * @typeParam D - the type `op` combines, which `T` must be (a `ReductionObject<Float64Array>` takes a
   *   `new Float64Array(n)`, whose buffer type is narrower).
   */
  allReduce<T extends D, D = T>(group: ColGroup, data: T, op: ReductionLike<D>, options?: CollectiveOptions<'allReduce'>): Promise<T> {
    return collectives.allReduce(this.#core, group, data, op, options);
  }

  /**
   * Divides the root's `rootObject`: member r gets `rootObject.elementAt(r, size)`. Non-roots pass
   * null. The root's own element is the one `elementAt` returned, not a copy.
   *
   * @throws {TypeError} (rejects) at the root if `rootObject` does not implement {@link DividableData}.
   * @throws {RangeError} (rejects) for a root outside the group.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective or root.
   */
  scatter<E>(group: ColGroup, rootObject: DividableData<E> | null, root: number, options?: CollectiveOptions<'scatter'>): Promise<E> {
    return collectives.scatter(this.#core, group, rootObject, root, options);
  }

  /**
   * Collects every member's `data` into the root's `rootObject`: `setElementAt(r, size, data of r)`
   * for every rank r; resolves with `rootObject` at the root, null elsewhere (where `rootObject` is
   * ignored).
   *
   * @throws {TypeError} (rejects) at the root if `rootObject` does not implement {@link DividableData}.
   * @throws {RangeError} (rejects) for a root outside the group, or a block of the wrong length.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective or root.
   */
  gather<D extends DividableData>(group: ColGroup, rootObject: D | null, data: unknown, root: number, options?: CollectiveOptions<'gather'>): Promise<D | null> {
    return collectives.gather(this.#core, group, rootObject, data, root, options);
  }

  /**
   * Like {@link ColMember.gather}, into every member's own `resultObject`, which it resolves with.
   *
   * @throws {TypeError} (rejects) if `resultObject` does not implement {@link DividableData}.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective.
   */
  allGather<D extends DividableData>(group: ColGroup, resultObject: D, data: unknown, options?: CollectiveOptions<'allGather'>): Promise<D> {
    return collectives.allGather(this.#core, group, resultObject, data, options);
  }

  /**
   * Every member sends a part to every member: element j of member r's `resultObject` becomes
   * member j's `sendObject.elementAt(r, size)` (MPI_Alltoall).
   *
   * @throws {TypeError} (rejects) if `sendObject` or `resultObject` does not implement {@link DividableData}.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective.
   */
  allToAll<D extends DividableData>(group: ColGroup, sendObject: DividableData, resultObject: D, options?: CollectiveOptions<'allToAll'>): Promise<D> {
    return collectives.allToAll(this.#core, group, sendObject, resultObject, options);
  }

  /**
   * Member r gets the reduction with `op` over all members of their `data.elementAt(r, size)`
   * (MPI_Reduce_scatter_block).
   *
   * @throws {TypeError} (rejects) if `op` is not a reduction or `data` does not implement {@link DividableData}.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective or reduction.
   * @typeParam E - the type of the elements and of the result.
   * @typeParam D - the type `op` combines, which `E` must be.
   */
  reduceScatter<E extends D, D = E>(group: ColGroup, data: DividableData<E>, op: ReductionLike<D>, options?: CollectiveOptions<'reduceScatter'>): Promise<E> {
    return collectives.reduceScatter(this.#core, group, data, op, options);
  }

  /**
   * Inclusive prefix reduction in rank order (MPI_Scan): member r gets data of 0 ⊕ … ⊕ data of r.
   *
   * @throws {TypeError} (rejects) if `op` is neither a function nor a {@link ReductionObject}.
   * @throws {@link CollectiveMismatchError} (rejects) if another member called a different collective or reduction.
   * @typeParam T - the type of `data` and of the result.
   * @typeParam D - the type `op` combines, which `T` must be (a `ReductionObject<Float64Array>` takes a
   *   `new Float64Array(n)`, whose buffer type is narrower).
   */
  scan<T extends D, D = T>(group: ColGroup, data: T, op: ReductionLike<D>, options?: CollectiveOptions<'scan'>): Promise<T> {
    return collectives.scan(this.#core, group, data, op, options);
  }
}
