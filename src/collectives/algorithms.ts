/**
 * Every collective algorithm, by collective and name: the one place that lists the algorithm
 * bodies, apart from the rules that choose between them (selection.ts), as in Open MPI's
 * coll/tuned. Each collective has a folder with one file per algorithm and an index.ts table.
 * Collectives and algorithms carry fixed wire ids (spec/wire-ids.spec.ts pins them), registered
 * here with the engine's signatures.
 */
import type { AlgorithmsOf, CollectiveName } from './algorithm.js';
import { registerOperations } from '../engine/signature.js';
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

/** The tables as written, their algorithm names kept as literal types (AlgorithmName). */
const TABLES = {
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
} satisfies { readonly [C in CollectiveName]: AlgorithmsOf<C> };

export const ALGORITHMS: { readonly [C in CollectiveName]: AlgorithmsOf<C> } = TABLES;

/**
 * The algorithm names of collective `C` (of every collective when `C` is a union), as a
 * string-literal union: a misspelled name in `{ algorithm }` fails to compile.
 */
export type AlgorithmName<C extends CollectiveName = CollectiveName> = C extends CollectiveName ? keyof (typeof TABLES)[C] & string : never;

export const COLLECTIVES = Object.keys(ALGORITHMS) as CollectiveName[];

/** Names each collective on the wire (above the algorithm's id in a signature's operation code): never change or reuse one. */
export const COLLECTIVE_IDS: { readonly [C in CollectiveName]: number } = {
  barrier: 1,
  broadcast: 2,
  reduce: 3,
  allReduce: 4,
  scatter: 5,
  gather: 6,
  allGather: 7,
  allToAll: 8,
  reduceScatter: 9,
  scan: 10,
};

// The engine's signatures carry these numbers and name them in errors; it does not import this layer.
registerOperations(
  Object.fromEntries(
    COLLECTIVES.map((collective) => [
      collective,
      { id: COLLECTIVE_IDS[collective], algorithms: Object.fromEntries(Object.entries(ALGORITHMS[collective]).map(([name, algorithm]) => [name, algorithm.id])) },
    ]),
  ),
);

/** The names of `collective`'s algorithms, in table order. */
export function algorithmNames<C extends CollectiveName>(collective: C): AlgorithmName<C>[] {
  return Object.keys(ALGORITHMS[collective]) as AlgorithmName<C>[];
}
