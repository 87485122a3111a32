/** The reduce algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { reduceBinomial } from './binomial.js';
import { reduceFlatBlocking } from './flat-blocking.js';
import { reduceFlatNonBlocking } from './flat-nonblocking.js';
import { reduceMst } from './mst.js';
import { reduceHierarchical } from './hierarchical.js';

export const reduceAlgorithms = {
  'binomial': { run: reduceBinomial, keepsRankOrder: true },
  'flat-blocking': { run: reduceFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { run: reduceFlatNonBlocking, keepsRankOrder: true },
  'mst': { run: reduceMst, keepsRankOrder: true },
  'hierarchical': { run: reduceHierarchical, keepsRankOrder: false, hierarchical: true },
} satisfies AlgorithmsOf<'reduce'>;
