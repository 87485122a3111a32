/**
 * Which algorithm a collective call runs. The rules live here, apart from the algorithm bodies
 * (algorithms.ts): today the default per collective; an operation that is not commutative only
 * runs algorithms that keep rank order.
 */
import { ALGORITHMS } from './algorithms.js';
import type { Algorithm, CollectiveName } from './algorithms.js';

const DEFAULTS: { readonly [C in CollectiveName]: keyof (typeof ALGORITHMS)[C] & string } = {
  barrier: 'hypercube',
  broadcast: 'binomial',
  reduce: 'binomial',
  allReduce: 'reduce-broadcast',
  scatter: 'binomial',
  gather: 'binomial',
  allGather: 'gather-broadcast',
  allToAll: 'flat',
  reduceScatter: 'reduce-scatter',
  scan: 'linear',
};

export interface Selection<C extends CollectiveName> {
  readonly name: string;
  readonly algorithm: Algorithm<C>;
}

export function selectAlgorithm<C extends CollectiveName>(collective: C, commutative = true): Selection<C> {
  const table = ALGORITHMS[collective] as Readonly<Record<string, Algorithm<C>>>;
  const name = DEFAULTS[collective];
  const algorithm = table[name];
  if (!commutative && !algorithm.keepsRankOrder) {
    const ordered = Object.entries(table).find(([, candidate]) => candidate.keepsRankOrder);
    if (ordered) return { name: ordered[0], algorithm: ordered[1] };
  }
  return { name, algorithm };
}
