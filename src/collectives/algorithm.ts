/**
 * What a collective algorithm is, apart from the tables that list them (algorithms.ts) and the
 * rules that choose between them (selection.ts): the signature each collective's algorithms share,
 * and what a call learns when it asks for one. Algorithm bodies and the context they run in
 * import this, never the tables or the rules, so the bodies stay below both.
 */
import type { CollectiveContext } from './context.js';
import type { ReductionObject } from '../../reduction/reduction-object.js';

/** What an algorithm of each collective is called with. */
export interface AlgorithmSignatures {
  barrier: (context: CollectiveContext) => Promise<void>;
  /** Returns the value at the root, the received copy elsewhere. */
  broadcast: <T>(context: CollectiveContext, value: T, root: number) => Promise<T>;
  /** Returns the reduction at the root, null elsewhere. */
  reduce: <T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number) => Promise<T | null>;
  allReduce: <T>(context: CollectiveContext, value: T, op: ReductionObject<T>) => Promise<T>;
  /** `elements` (by rank) at the root, null elsewhere; returns this rank's element. */
  scatter: <E>(context: CollectiveContext, elements: readonly E[] | null, root: number) => Promise<E>;
  /** Returns every rank's element, by rank, at the root; null elsewhere. */
  gather: <E>(context: CollectiveContext, element: E, root: number) => Promise<E[] | null>;
  /** Returns every rank's element, by rank. */
  allGather: <E>(context: CollectiveContext, element: E) => Promise<E[]>;
  /** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
  allToAll: <E>(context: CollectiveContext, outgoing: readonly E[]) => Promise<E[]>;
  /** `elements[j]` is this member's contribution to rank j's result; returns this rank's reduction. */
  reduceScatter: <E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>) => Promise<E>;
  /** Inclusive prefix in rank order. */
  scan: <T>(context: CollectiveContext, value: T, op: ReductionObject<T>) => Promise<T>;
}

/** The collectives: `barrier`, `broadcast`, `reduce`, `allReduce`, `scatter`, `gather`, `allGather`, `allToAll`, `reduceScatter`, `scan`. */
export type CollectiveName = keyof AlgorithmSignatures;

export interface Algorithm<C extends CollectiveName> {
  /** Names the algorithm on the wire (below its collective's id in a signature's operation code): never change or reuse one. */
  readonly id: number;
  readonly run: AlgorithmSignatures[C];
  /** Combines operands in rank order, so it may run a non-commutative reduction. */
  readonly keepsRankOrder: boolean;
  /** Runs in two levels, within hosts and among one leader per host (hierarchy.ts); never chosen for a level itself. */
  readonly hierarchical?: boolean;
  /**
   * Runs through the collective segment of its members' host (segment/): a table chooses it only
   * where the call's members can share one (CallShape.sharedMemory). It checks every member's
   * signature itself, so a rooted call needs no root check by messages.
   */
  readonly sharedMemory?: boolean;
}

export type AlgorithmsOf<C extends CollectiveName> = Readonly<Record<string, Algorithm<C>>>;

/** An algorithm chosen for a call. */
export interface Selection<C extends CollectiveName> {
  readonly name: string;
  readonly algorithm: Algorithm<C>;
  /** Why the algorithm asked for or in the table was not taken, when it was not (for CCJS_TRACE). */
  readonly refused?: string;
}

/** Where a group's members are: every member knows it, so every member makes the same choice. */
export interface Layout {
  readonly hosts: number;
  /** Members on the most populated host. */
  readonly perHost: number;
}

/** What a call says about itself when it asks for an algorithm. */
export interface CallShape {
  /** Bytes per member; undefined when this member cannot know them (then rules bounded by size do not fit). */
  readonly bytes: number | undefined;
  readonly members: number;
  readonly commutative: boolean;
  /** Per-call or per-group choice, already merged (per-call wins). */
  readonly requested: string | undefined;
  /** Where the members are (absent: all on one host). */
  readonly layout?: Layout;
  /**
   * true where the call's members can share a collective segment (segment/segment.ts), else why
   * not (absent: not known, so not).
   */
  readonly sharedMemory?: true | string;
}

/** Chooses the algorithm of a call, and of each level of a hierarchical one (selection.ts's Selector). */
export interface AlgorithmChooser {
  /** CCJS_TRACE: prints each call's choice. */
  readonly trace: ((line: string) => void) | undefined;
  /** The algorithm of a call: asked for, forced by CCJS_ALGORITHMS, or from the table. */
  select<C extends CollectiveName>(collective: C, call: CallShape): Selection<C>;
  /** The algorithm of one level of a hierarchical call (never a hierarchical one). */
  selectLevel<C extends CollectiveName>(collective: C, call: CallShape): Selection<C>;
  /** Whether the choice depends on the message size, which only the root knows. */
  dependsOnSize(collective: CollectiveName, members: number, layout: Layout, requested: string | undefined, sharedMemory?: true | string): boolean;
  /** The algorithm the root chose, as its first message names it. */
  learned<C extends CollectiveName>(collective: C, name: string | undefined): Selection<C>;
}
