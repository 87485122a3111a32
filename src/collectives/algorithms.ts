/**
 * Every collective algorithm, by collective and name: the one place where algorithm bodies are
 * listed, apart from the rules that choose between them (selection.ts), as in Open MPI's
 * coll/tuned. Each algorithm lives in its own file.
 */
import type { CollectiveContext } from './context.js';
import type { ReductionObject } from '../../reduction/reduction-object.js';
import { barrierHypercube } from './barrier-hypercube.js';
import { broadcastBinomial } from './broadcast-binomial.js';
import { reduceBinomial } from './reduce-binomial.js';
import { allReduceReduceBroadcast } from './allreduce-reduce-broadcast.js';
import { scatterBinomial } from './scatter-binomial.js';
import { gatherBinomial } from './gather-binomial.js';
import { allGatherGatherBroadcast } from './allgather-gather-broadcast.js';
import { allToAllFlat } from './alltoall-flat.js';
import { reduceScatterReduceScatter } from './reducescatter-reduce-scatter.js';
import { scanLinear } from './scan-linear.js';

export interface AlgorithmSignatures {
  barrier: (context: CollectiveContext) => Promise<void>;
  broadcast: <T>(context: CollectiveContext, value: T, root: number) => Promise<T>;
  reduce: <T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number) => Promise<T | null>;
  allReduce: <T>(context: CollectiveContext, value: T, op: ReductionObject<T>) => Promise<T>;
  scatter: <E>(context: CollectiveContext, elements: readonly E[] | null, root: number) => Promise<E>;
  gather: <E>(context: CollectiveContext, element: E, root: number) => Promise<E[] | null>;
  allGather: <E>(context: CollectiveContext, element: E) => Promise<E[]>;
  allToAll: <E>(context: CollectiveContext, outgoing: readonly E[]) => Promise<E[]>;
  reduceScatter: <E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>) => Promise<E>;
  scan: <T>(context: CollectiveContext, value: T, op: ReductionObject<T>) => Promise<T>;
}

export type CollectiveName = keyof AlgorithmSignatures;

export interface Algorithm<C extends CollectiveName> {
  readonly run: AlgorithmSignatures[C];
  /** Combines operands in rank order, so it may run a non-commutative reduction. */
  readonly keepsRankOrder: boolean;
}

type AlgorithmTable = { readonly [C in CollectiveName]: Readonly<Record<string, Algorithm<C>>> };

export const ALGORITHMS: AlgorithmTable = {
  barrier: { hypercube: { run: barrierHypercube, keepsRankOrder: true } },
  broadcast: { binomial: { run: broadcastBinomial, keepsRankOrder: true } },
  reduce: { binomial: { run: reduceBinomial, keepsRankOrder: true } },
  allReduce: { 'reduce-broadcast': { run: allReduceReduceBroadcast, keepsRankOrder: true } },
  scatter: { binomial: { run: scatterBinomial, keepsRankOrder: true } },
  gather: { binomial: { run: gatherBinomial, keepsRankOrder: true } },
  allGather: { 'gather-broadcast': { run: allGatherGatherBroadcast, keepsRankOrder: true } },
  allToAll: { flat: { run: allToAllFlat, keepsRankOrder: true } },
  reduceScatter: { 'reduce-scatter': { run: reduceScatterReduceScatter, keepsRankOrder: true } },
  scan: { linear: { run: scanLinear, keepsRankOrder: true } },
};

export const COLLECTIVES = Object.keys(ALGORITHMS) as CollectiveName[];
