/**
 * The application's unit of parallelism (CCJ 2): subclass ColMember, implement run(), add the
 * member to groups, start() it. Every communication call is a method of the member, as in CCJ.
 * The member's bookkeeping lives in a MemberCore behind an ES private field, so subclasses may
 * use any field names of their own.
 */
import type { ColGroup } from '../groups/col-group.js';
import type { ColGroupMaster } from '../groups/col-group-master.js';
import { CCJError, GroupError } from './errors.js';
import { ANY_SOURCE, ANY_TAG, SendMode } from './engine/calls.js';
import type { CallOwner, ProbeResult } from './engine/calls.js';
import { Delivery, MemberReceive, POINT_TO_POINT, checkSource, messageFrame, receiveTag, sendTag } from './messages.js';
import * as collectives from './collectives/operations.js';
import type { CollectiveOptions } from './collectives/operations.js';
import type { ReductionLike } from '../reduction/reduction-object.js';
import type { DividableData } from '../dividable/dividable-data.js';

export { ANY_SOURCE, ANY_TAG };

/** Collective operation counters run 1..2^31−1 and wrap: a job may run collectives forever. */
const TAG_LIMIT = 0x7fff_ffff;

export function nextOperationCounter(previous: number): number {
  return (previous % TAG_LIMIT) + 1;
}

/** Options of point-to-point calls: a tag (0..2^31−1; receives and probes may pass ANY_TAG). */
export interface MessageOptions {
  readonly tag?: number;
}

/** What receiveMessage resolves with: the value and where it came from. */
export interface ReceivedMessage<T> {
  readonly value: T;
  readonly source: number;
  readonly tag: number;
}

/** What the library keeps about a member; reached through `memberCore(member)`. */
export class MemberCore implements CallOwner {
  private masterRef: ColGroupMaster | undefined;
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
    return `member ${this.name} #${this.localId}${this.masterRef ? ` of ${this.masterRef.label}` : ''}`;
  }

  get isRunning(): boolean {
    return this.started !== undefined && !this.finished;
  }

  attach(master: ColGroupMaster, localId: number): void {
    if (this.masterRef !== undefined && this.masterRef !== master) {
      throw new GroupError(`${this.name} already belongs to another ColGroupMaster`);
    }
    if (this.masterRef === undefined) {
      this.masterRef = master;
      this.localId = localId;
    }
  }

  master(operation: string): ColGroupMaster {
    if (this.masterRef === undefined) {
      throw new CCJError(`${operation}: ${this.name} was never added to a group (call ColGroupMaster.addMember first)`);
    }
    return this.masterRef;
  }

  /** This member's rank in `group`; GroupError naming the call if it is not a member. */
  rankIn(group: ColGroup, operation: string): number {
    if (group === this.lastGroup) return this.lastRank;
    this.master(operation);
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
    const master = this.master(operation);
    const frame = messageFrame(master.serializer, value, 0, group.context, source, destination, tag, POINT_TO_POINT);
    return master.engine.send(group.route, frame, mode, this, operation);
  }

  /** Posts a point-to-point receive; its `result()` is the caller's promise. */
  postReceive(group: ColGroup, source: number, operation: string, options: MessageOptions | undefined, delivery: Delivery): MemberReceive {
    const destination = this.rankIn(group, operation);
    checkSource(group, source, operation);
    const tag = receiveTag(options, operation);
    const master = this.master(operation);
    const receive = new MemberReceive(group.route, operation, this, destination, source, tag, master.serializer, delivery, undefined);
    master.engine.post(receive);
    return receive;
  }

  probe(group: ColGroup, source: number, options: MessageOptions | undefined): Promise<ProbeResult> {
    const destination = this.rankIn(group, 'probe');
    checkSource(group, source, 'probe');
    return this.master('probe').engine.probe(group.route, this, destination, source, receiveTag(options, 'probe'));
  }
}

let coreOf: (member: ColMember) => MemberCore;

/** @internal The library's bookkeeping for `member`. */
export function memberCore(member: ColMember): MemberCore {
  return coreOf(member);
}

export abstract class ColMember {
  readonly #core = new MemberCore(this);

  static {
    coreOf = (member) => member.#core;
  }

  abstract run(): Promise<void>;

  /** Runs run() as this member's own thread of control; resolves when it returns. */
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
      master.memberReturned(core);
      await this.done();
    })();
    return core.started;
  }

  /** De-registers the member; the job can end when all members are done. Idempotent. */
  async done(): Promise<void> {
    const core = this.#core;
    if (core.finished) return;
    core.finished = true;
    await core.master('done()').memberDone(this);
  }

  // ---- point-to-point (CCJ 2.2, with MPI's tags and wildcards) ----
  // Argument errors reject the returned promise (TypeError/RangeError) before anything is sent.

  /** Resolves once the receiver's receive has taken the message. */
  sendSync(group: ColGroup, object: unknown, destination: number, options?: MessageOptions): Promise<void> {
    try {
      return this.#core.send(group, destination, object, SendMode.Synchronous, 'sendSync', options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Resolves once the object is captured and handed to the transport; never waits for its receive. */
  sendAsync(group: ColGroup, object: unknown, destination: number, options?: MessageOptions): Promise<void> {
    try {
      return this.#core.send(group, destination, object, SendMode.Captured, 'sendAsync', options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The earliest-sent message from `source` (or ANY_SOURCE) with the tag (default 0, or ANY_TAG). */
  receive<T>(group: ColGroup, source: number, options?: MessageOptions): Promise<T> {
    try {
      return this.#core.postReceive(group, source, 'receive', options, Delivery.Value).result<T>(true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Like receive, with the envelope: `{ value, source, tag }` (for ANY_SOURCE and ANY_TAG receives). */
  receiveMessage<T>(group: ColGroup, source: number, options?: MessageOptions): Promise<ReceivedMessage<T>> {
    try {
      return this.#core.postReceive(group, source, 'receiveMessage', options, Delivery.Envelope).result<ReceivedMessage<T>>(true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Resolves, without receiving it, with the envelope and size of the earliest message that fits. */
  probe(group: ColGroup, source: number, options?: MessageOptions): Promise<ProbeResult> {
    try {
      return this.#core.probe(group, source, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Sends to `destination` and receives from `source` at the same time (MPI_Sendrecv); `options.tag` for both. */
  async sendReceive<T>(group: ColGroup, object: unknown, destination: number, source: number, options?: MessageOptions): Promise<T> {
    const core = this.#core;
    // Posted first, so that both sides of an exchange can send at once; waited for once sent.
    const receive = core.postReceive(group, source, 'sendReceive', options, Delivery.Value);
    const sent = core.send(group, destination, object, SendMode.Captured, 'sendReceive', options);
    const [, value] = await Promise.all([sent, receive.result<T>(true)]);
    return value;
  }

  /** Exchanges objects with `peer`: both sides call it and get the other's object. */
  rendezvous<T>(group: ColGroup, object: unknown, peer: number, options?: MessageOptions): Promise<T> {
    return this.sendReceive<T>(group, object, peer, peer, options);
  }

  // ---- collectives (CCJ 2.3, plus MPI's allToAll, reduceScatter and scan) ----
  // Members of a group must call them in the same order with the same root and reduction.
  // `options.algorithm` picks an algorithm by name (see src/collectives/algorithms.ts).

  /** Waits until every member of the group has called it. */
  barrier(group: ColGroup, options?: CollectiveOptions): Promise<void> {
    return collectives.barrier(this.#core, group, options);
  }

  /** The root's `object` to everyone: the root gets its own reference, the others a copy. */
  broadcast<T>(group: ColGroup, object: T, root: number, options?: CollectiveOptions): Promise<T> {
    return collectives.broadcast(this.#core, group, object, root, options);
  }

  /** The reduction of every member's `data` at the root; null elsewhere. */
  reduce<T>(group: ColGroup, data: T, op: ReductionLike<NoInfer<T>>, root: number, options?: CollectiveOptions): Promise<T | null> {
    return collectives.reduce(this.#core, group, data, op, root, options);
  }

  /** The reduction of every member's `data`, at every member. */
  allReduce<T>(group: ColGroup, data: T, op: ReductionLike<NoInfer<T>>, options?: CollectiveOptions): Promise<T> {
    return collectives.allReduce(this.#core, group, data, op, options);
  }

  /** Member r gets `rootObject.elementAt(r, size)` of the root's object (ignored elsewhere). */
  scatter<E>(group: ColGroup, rootObject: DividableData<E> | null, root: number, options?: CollectiveOptions): Promise<E> {
    return collectives.scatter(this.#core, group, rootObject, root, options);
  }

  /** The root's `rootObject` gets `setElementAt(r, size, data of r)` for every rank; null elsewhere. */
  gather<D extends DividableData>(group: ColGroup, rootObject: D | null, data: unknown, root: number, options?: CollectiveOptions): Promise<D | null> {
    return collectives.gather(this.#core, group, rootObject, data, root, options);
  }

  /** Like gather, into every member's own `resultObject`. */
  allGather<D extends DividableData>(group: ColGroup, resultObject: D, data: unknown, options?: CollectiveOptions): Promise<D> {
    return collectives.allGather(this.#core, group, resultObject, data, options);
  }

  /** Element j of member r's result is member j's `sendObject.elementAt(r, size)`. */
  allToAll<D extends DividableData>(group: ColGroup, sendObject: DividableData, resultObject: D, options?: CollectiveOptions): Promise<D> {
    return collectives.allToAll(this.#core, group, sendObject, resultObject, options);
  }

  /** Member r gets the reduction over all members of `data.elementAt(r, size)`. */
  reduceScatter<E>(group: ColGroup, data: DividableData<E>, op: ReductionLike<NoInfer<E>>, options?: CollectiveOptions): Promise<E> {
    return collectives.reduceScatter(this.#core, group, data, op, options);
  }

  /** Inclusive prefix reduction in rank order: member r gets data0 ⊕ ... ⊕ data_r. */
  scan<T>(group: ColGroup, data: T, op: ReductionLike<NoInfer<T>>, options?: CollectiveOptions): Promise<T> {
    return collectives.scan(this.#core, group, data, op, options);
  }
}
