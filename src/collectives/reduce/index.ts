/** The reduce algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { reduceBinomial } from './binomial.js';
import { reduceFlatBlocking } from './flat-blocking.js';
import { reduceFlatNonBlocking } from './flat-nonblocking.js';
import { reduceMst } from './mst.js';
import { reduceHierarchical } from './hierarchical.js';
import { reduceSharedMemory } from './shared-memory.js';

export const reduceAlgorithms = {
  'binomial': { id: 0, run: reduceBinomial, keepsRankOrder: true },
  'flat-blocking': { id: 1, run: reduceFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { id: 2, run: reduceFlatNonBlocking, keepsRankOrder: true },
  'mst': { id: 3, run: reduceMst, keepsRankOrder: true },
  'hierarchical': { id: 4, run: reduceHierarchical, keepsRankOrder: false, hierarchical: true },
  'shared-memory': { id: 5, run: reduceSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'reduce'>;
