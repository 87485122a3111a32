/** The allReduce algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { allReduceReduceBroadcast } from './reduce-broadcast.js';
import { allReduceFlatNonBlocking } from './flat-nonblocking.js';
import { allReduceBinomial } from './binomial.js';
import { allReduceBdeBlocking } from './bde-blocking.js';
import { allReduceBdeNonBlocking } from './bde-nonblocking.js';
import { allReduceRabenseifner } from './rabenseifner.js';
import { allReduceRing } from './ring.js';
import { allReduceHierarchical } from './hierarchical.js';

export const allReduceAlgorithms = {
  'reduce-broadcast': { run: allReduceReduceBroadcast, keepsRankOrder: true },
  'flat-nonblocking': { run: allReduceFlatNonBlocking, keepsRankOrder: true },
  'binomial': { run: allReduceBinomial, keepsRankOrder: true },
  'bde-blocking': { run: allReduceBdeBlocking, keepsRankOrder: true },
  'bde-nonblocking': { run: allReduceBdeNonBlocking, keepsRankOrder: true },
  'rabenseifner': { run: allReduceRabenseifner, keepsRankOrder: true },
  'ring': { run: allReduceRing, keepsRankOrder: false },
  'hierarchical': { run: allReduceHierarchical, keepsRankOrder: false, hierarchical: true },
} satisfies AlgorithmsOf<'allReduce'>;
