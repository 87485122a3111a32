/**
 * What an algorithm sees of one collective call: its rank and the group's size, and sends and
 * receives that carry this call's tag (CCJ 3.1's per-group counter) and signature, both fixed once
 * per call. Algorithms speak to the engine through this, never to a device. A level of a
 * hierarchical algorithm (hierarchy.ts) is a context over a subset of the group's ranks, numbered
 * 0..size-1 in the order given: any algorithm runs on it unchanged. Its messages keep the call's
 * tag and signature; members go through the levels in one order, and messages between two members
 * keep their order, so each level receives exactly its own.
 */
import { FLAG_COLLECTIVE } from '../../transport/frame.js';
import { SendMode } from '../engine/calls.js';
import { Delivery, EncodedValue, MemberReceive, decodeValue, encodeValue, messageFrame } from '../engine/messages.js';
import type { Signature } from '../engine/signature.js';
import type { Engine } from '../engine/engine.js';
import type { CallOwner, Route } from '../engine/calls.js';
import type { CollectiveName, Layout, Selection } from './algorithm.js';
import type { Endpoint } from './endpoint.js';
import type { CollectiveCaller, CollectiveGroup } from './participants.js';
import { sharesMemory } from './segment/sharing.js';

/** What the levels of a hierarchical call key their choice of algorithm on. */
export interface LevelShape {
  /** Bytes per member, undefined where members may not know them (broadcast and scatter non-roots). */
  readonly bytes: number | undefined;
  readonly commutative: boolean;
  /** Where this context's members are. */
  readonly layout: Layout;
}

/** A collective call as a collective segment sees it (CollectiveContext.sharedCall). */
export interface SharedCall {
  readonly engine: Engine;
  readonly owner: CallOwner;
  readonly route: Route;
  /** This member's rank in the group. */
  readonly groupRank: number;
  readonly tag: number;
  readonly signature: Signature;
}

/** The body of a root check: the signature says it all. */
const NO_DATA = new Uint8Array(0);

export class CollectiveContext {
  readonly size: number;
  /** How this call's sends and receives name themselves ("allReduce: send" to rank 3, ...). */
  private readonly sending: string;
  private readonly receiving: string;

  /** This member's rank in the group. */
  private readonly groupRank: number;
  private readonly endpoint: Endpoint;

  constructor(
    private readonly core: CollectiveCaller,
    readonly group: CollectiveGroup,
    /** This member's rank in this context. */
    readonly rank: number,
    /** The member-facing operation, e.g. 'allReduce', for error messages. */
    readonly operation: string,
    private readonly tag: number,
    private readonly signature: Signature,
    readonly shape: LevelShape,
    /** A level's group ranks, by rank in this context (absent: the whole group, in rank order). */
    private readonly groupRanks?: readonly number[],
    /** A level's name, for CCJS_TRACE ("intra-host", "inter-host"). */
    private readonly levelName = '',
  ) {
    this.size = groupRanks?.length ?? group.size();
    this.groupRank = groupRanks?.[rank] ?? rank;
    this.sending = `${operation}: send`;
    this.receiving = `${operation}: receive`;
    this.endpoint = core.endpoint(operation);
  }

  /**
   * A level of this call over `groupRanks` (this member's among them), laid out as `layout`.
   * Its ranks are the positions in `groupRanks`.
   */
  level(name: string, groupRanks: readonly number[], layout: Layout): CollectiveContext {
    return new CollectiveContext(this.core, this.group, groupRanks.indexOf(this.groupRank), this.operation, this.tag, this.signature, { ...this.shape, layout }, groupRanks, name);
  }

  /** The flat algorithm of `collective` this level runs, as the selection tables choose it for the level's members and layout. */
  choose<C extends CollectiveName>(collective: C): Selection<C> {
    const { selector } = this.endpoint;
    const { bytes, commutative, layout } = this.shape;
    const sharedMemory = sharesMemory(this.group, this.groupRanks, this.endpoint.engine);
    const selection = selector.selectLevel(collective, { bytes, members: this.size, commutative, requested: undefined, layout, sharedMemory });
    const refused = selection.refused === undefined ? '' : `; ${selection.refused}`;
    selector.trace?.(`ccjs trace: group '${this.group.name}' rank ${this.groupRank}: ${this.operation} hierarchical, ${this.levelName} level: ${collective} ${selection.name}, ${this.size} members${refused}`);
    return selection;
  }

  /** A call over the whole group, in rank order (not a level of a hierarchical call). */
  get wholeGroup(): boolean {
    return this.groupRanks === undefined;
  }

  /** The group rank of this context's member `rank`. */
  groupRankOf(rank: number): number {
    return this.groupRanks?.[rank] ?? rank;
  }

  /** What a call through a collective segment needs beyond sends and receives: the call's identity, and the engine that tracks its waits. */
  sharedCall(): SharedCall {
    return { engine: this.endpoint.engine, owner: this.core, route: this.group.route, groupRank: this.groupRank, tag: this.tag, signature: this.signature };
  }

  /** `value` encoded once, for sending to several members. */
  encode(value: unknown): EncodedValue {
    return encodeValue(this.endpoint.serializer, value);
  }

  /** The value an encoded message carries. */
  decode<T>(message: EncodedValue): T {
    return decodeValue(this.endpoint.serializer, message.format, message.bodies) as T;
  }

  /** Sends (a value, or an encoded message as it is) and resolves once the buffers may be reused (the receiver need not have it yet). */
  send(destination: number, value: unknown): Promise<void> {
    const { engine, serializer } = this.endpoint;
    const frame = messageFrame(serializer, value, FLAG_COLLECTIVE, this.group.context, this.groupRank, this.groupRanks?.[destination] ?? destination, this.tag, this.signature);
    return engine.send(this.group.route, frame, SendMode.Borrowed, this.core, this.sending);
  }

  /** MPI_Isend: starts a send for the caller to await later (it spins then, if still pending); a failure in the meantime is not unhandled. */
  isend(destination: number, value: unknown): Promise<void> {
    const sent = this.send(destination, value);
    sent.catch(() => undefined);
    return sent;
  }

  /** Receives from `source`, spinning on polling devices while it waits. */
  receive<T>(source: number): Promise<T> {
    return this.post(source, Delivery.Value).result<T>(true);
  }

  /** Receives from `source` without decoding, to forward the message as it came. */
  receiveEncoded(source: number): Promise<EncodedValue> {
    return this.post(source, Delivery.Encoded).result<EncodedValue>(true);
  }

  /**
   * MPI_Irecv: posts the receive now, for the caller to await later (possibly after other awaits);
   * it spins once awaited while still pending, and a failure surfaces where the promise is awaited.
   */
  postReceive<T>(source: number): Promise<T> {
    return this.post(source, Delivery.Value).result<T>(false);
  }

  /**
   * MPI_Sendrecv: posts the receive, starts the send, and waits for the receive (spinning), then
   * for the send. Both are under way while it spins: a large send completes only once the peer
   * has read it, which the spin's polls carry along, where waiting for the send first would sleep.
   */
  async sendReceive<T>(destination: number, value: unknown, source: number): Promise<T> {
    const receive = this.post(source, Delivery.Value);
    const sent = this.isend(destination, value);
    const received = await receive.result<T>(true);
    await sent;
    return received;
  }

  /**
   * Rooted collectives: tells the next rank this member's call (root included) and checks the
   * previous rank's, before any data moves. Every member agrees exactly when every neighbour pair
   * does, so a root passed differently anywhere fails the call at some member, whose abort
   * reaches the others, even where no data would ever move between the members that disagree
   * (each waiting for the other: a hang otherwise). Resolves once the previous rank's call matched.
   */
  checkRoot(): Promise<unknown> {
    const check = this.post((this.rank - 1 + this.size) % this.size, Delivery.Value, `${this.operation}: root check`);
    this.isend((this.rank + 1) % this.size, NO_DATA);
    return check.result(false);
  }

  /**
   * Fails this call here and at every other member (who may be waiting for data from this one,
   * or from a member that waits for this one): a collective that failed anywhere never hangs.
   */
  abort(error: Error): void {
    this.endpoint.engine.abortCollective(this.group.route, this.groupRank, this.tag, this.signature, error);
  }

  private post(source: number, delivery: Delivery, operation = this.receiving): MemberReceive {
    const { engine, serializer } = this.endpoint;
    const receive = new MemberReceive(this.group.route, operation, this.core, this.groupRank, this.groupRanks?.[source] ?? source, this.tag, serializer, delivery, this.signature);
    engine.post(receive);
    return receive;
  }
}
