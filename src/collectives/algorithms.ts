/**
 * Every collective algorithm, by collective and name: the one place that lists the algorithm
 * bodies, apart from the rules that choose between them (selection.ts), as in Open MPI's
 * coll/tuned. Each collective has a folder with one file per algorithm and an index.ts table.
 */
import type { CollectiveContext } from './context.js';
import type { ReductionObject } from '../../reduction/reduction-object.js';
import { barrierAlgorithms } from './barrier/index.js';
import { broadcastAlgorithms } from './broadcast/index.js';
import { reduceAlgorithms } from './reduce/index.js';
import { allReduceAlgorithms } from './allreduce/index.js';
import { scatterAlgorithms } from './scatter/index.js';
import { gatherAlgorithms } from './gather/index.js';
import { allGatherAlgorithms } from './allgather/index.js';
import { allToAllAlgorithms } from './alltoall/index.js';
import { reduceScatterAlgorithms } from './reducescatter/index.js';
import { scanAlgorithms } from './scan/index.js';

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

export type CollectiveName = keyof AlgorithmSignatures;

export interface Algorithm<C extends CollectiveName> {
  readonly run: AlgorithmSignatures[C];
  /** Combines operands in rank order, so it may run a non-commutative reduction. */
  readonly keepsRankOrder: boolean;
}

export type AlgorithmsOf<C extends CollectiveName> = Readonly<Record<string, Algorithm<C>>>;

export const ALGORITHMS: { readonly [C in CollectiveName]: AlgorithmsOf<C> } = {
  barrier: barrierAlgorithms,
  broadcast: broadcastAlgorithms,
  reduce: reduceAlgorithms,
  allReduce: allReduceAlgorithms,
  scatter: scatterAlgorithms,
  gather: gatherAlgorithms,
  allGather: allGatherAlgorithms,
  allToAll: allToAllAlgorithms,
  reduceScatter: reduceScatterAlgorithms,
  scan: scanAlgorithms,
};

export const COLLECTIVES = Object.keys(ALGORITHMS) as CollectiveName[];
