/**
 * The application's unit of parallelism (CCJ 2): subclass ColMember, implement run(), add the
 * member to groups, start() it. Every communication call is a method of the member, as in CCJ.
 * The member's bookkeeping lives in a MemberCore behind an ES private field, so subclasses may
 * use any field names of their own.
 */
import type { ColGroup } from '../groups/col-group.js';
import type { ColGroupMaster } from '../groups/col-group-master.js';
import { CCJError, GroupError, PeerLostError } from './errors.js';
import { POINT_TO_POINT_TAG } from './messaging.js';
import type { SendMode } from './messaging.js';
import type { Request } from '../transport/request.js';
import type { Packet } from '../transport/device.js';
import * as collectives from './collectives/operations.js';
import type { CollectiveOptions } from './collectives/operations.js';
import type { ReductionLike } from '../reduction/reduction-object.js';
import type { DividableData } from '../dividable/dividable-data.js';

/** Collective tags wrap below 2^31 and never collide with the point-to-point tag. */
const TAG_LIMIT = 0x7fff_ffff;

/** What the library keeps about a member; reached through `memberCore(member)`. */
export class MemberCore {
  private masterRef: ColGroupMaster | undefined;
  /** The member's id within its process: the order in which it was first added. */
  localId = -1;
  started: Promise<void> | undefined;
  finished = false;
  private readonly collectiveCounters = new Map<number, number>();

  constructor(readonly member: ColMember) {}

  get name(): string {
    return this.member.constructor.name;
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
    this.master(operation);
    if (!group.has(this.member)) throw new GroupError(`${operation}: ${this.name} is not a member of group '${group.name}'`);
    return group.getRank(this.member);
  }

  /** The tag of this member's next collective operation on `group` (CCJ 3.1). */
  nextCollectiveTag(group: ColGroup): number {
    const count = (this.collectiveCounters.get(group.context) ?? 0) + 1;
    this.collectiveCounters.set(group.context, count);
    return (count % TAG_LIMIT) + 1;
  }

  isend(group: ColGroup, source: number, destination: number, tag: number, value: unknown, mode: SendMode, signature?: Uint8Array): Request<void> {
    return this.master('send').messenger.isend(group, source, destination, tag, value, mode, signature);
  }

  /** Sends and waits as `mode` says; a lost peer is restated in terms of this call. */
  send(group: ColGroup, source: number, destination: number, tag: number, value: unknown, mode: SendMode, what: string, signature?: Uint8Array): Promise<void> {
    return this.track(group, what, destination, this.isend(group, source, destination, tag, value, mode, signature));
  }

  /** Receives and decodes, checking the sender's operation signature against `signature`. */
  async receive<T>(group: ColGroup, destination: number, source: number, tag: number, what: string, signature?: Uint8Array): Promise<T> {
    const messenger = this.master('receive').messenger;
    const packet = await this.track<Packet>(group, what, source, messenger.irecv(group, destination, source, tag));
    return messenger.decode<T>(packet, signature, () => `${what} rank ${source} of group '${group.name}' (rank ${destination} here)`);
  }

  private async track<T>(group: ColGroup, what: string, peer: number, request: Request<T>): Promise<T> {
    try {
      return await request.wait();
    } catch (error) {
      if (error instanceof PeerLostError) {
        throw new PeerLostError(`${what} rank ${peer} of group '${group.name}' failed: ${error.message}`, error.processRank, { cause: error });
      }
      throw error;
    }
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

  // ---- point-to-point (CCJ 2.2) ----

  /** Resolves once the receiver's receive has taken the message. */
  async sendSync(group: ColGroup, object: unknown, destination: number): Promise<void> {
    const source = this.#core.rankIn(group, 'sendSync');
    group.checkRank(destination, 'sendSync destination');
    await this.#core.send(group, source, destination, POINT_TO_POINT_TAG, object, 'synchronous', 'sendSync to');
  }

  /** Resolves once the object is captured and handed to the transport; never waits for the receiver. */
  async sendAsync(group: ColGroup, object: unknown, destination: number): Promise<void> {
    const source = this.#core.rankIn(group, 'sendAsync');
    group.checkRank(destination, 'sendAsync destination');
    await this.#core.send(group, source, destination, POINT_TO_POINT_TAG, object, 'captured', 'sendAsync to');
  }

  async receive<T>(group: ColGroup, source: number): Promise<T> {
    const destination = this.#core.rankIn(group, 'receive');
    group.checkRank(source, 'receive source');
    return this.#core.receive<T>(group, destination, source, POINT_TO_POINT_TAG, 'receive from');
  }

  /** Sends to `destination` and receives from `source` at the same time (MPI_Sendrecv). */
  async sendReceive<T>(group: ColGroup, object: unknown, destination: number, source: number): Promise<T> {
    const core = this.#core;
    const rank = core.rankIn(group, 'sendReceive');
    group.checkRank(destination, 'sendReceive destination');
    group.checkRank(source, 'sendReceive source');
    const sent = core.send(group, rank, destination, POINT_TO_POINT_TAG, object, 'captured', 'sendReceive to');
    const [, received] = await Promise.all([sent, core.receive<T>(group, rank, source, POINT_TO_POINT_TAG, 'sendReceive from')]);
    return received;
  }

  /** Exchanges objects with `peer`: both sides call it and get the other's object. */
  rendezvous<T>(group: ColGroup, object: unknown, peer: number): Promise<T> {
    return this.sendReceive<T>(group, object, peer, peer);
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
