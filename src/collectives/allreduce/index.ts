/** The allReduce algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { allReduceReduceBroadcast } from './reduce-broadcast.js';
import { allReduceFlatNonBlocking } from './flat-nonblocking.js';
import { allReduceBinomial } from './binomial.js';
import { allReduceBdeBlocking } from './bde-blocking.js';
import { allReduceBdeNonBlocking } from './bde-nonblocking.js';
import { allReduceRabenseifner } from './rabenseifner.js';
import { allReduceRing } from './ring.js';
import { allReduceHierarchical } from './hierarchical.js';
import { allReduceSharedMemory } from './shared-memory.js';

export const allReduceAlgorithms = {
  'reduce-broadcast': { id: 0, run: allReduceReduceBroadcast, keepsRankOrder: true },
  'flat-nonblocking': { id: 1, run: allReduceFlatNonBlocking, keepsRankOrder: true },
  'binomial': { id: 2, run: allReduceBinomial, keepsRankOrder: true },
  'bde-blocking': { id: 3, run: allReduceBdeBlocking, keepsRankOrder: true },
  'bde-nonblocking': { id: 4, run: allReduceBdeNonBlocking, keepsRankOrder: true },
  'rabenseifner': { id: 5, run: allReduceRabenseifner, keepsRankOrder: true },
  'ring': { id: 6, run: allReduceRing, keepsRankOrder: false },
  'hierarchical': { id: 7, run: allReduceHierarchical, keepsRankOrder: false, hierarchical: true },
  'shared-memory': { id: 8, run: allReduceSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'allReduce'>;
