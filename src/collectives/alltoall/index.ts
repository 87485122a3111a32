/** The allToAll algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { allToAllFlat } from './flat.js';
import { allToAllFlatBlocking } from './flat-blocking.js';
import { allToAllFlatNonblocking } from './flat-nonblocking.js';
import { allToAllFlatNonblocking1 } from './flat-nonblocking-1.js';
import { allToAllFlatNonblocking2 } from './flat-nonblocking-2.js';
import { allToAllPairwise } from './pairwise.js';
import { allToAllBruck } from './bruck.js';

export const allToAllAlgorithms = {
  'flat': { run: allToAllFlat, keepsRankOrder: true },
  'flat-blocking': { run: allToAllFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { run: allToAllFlatNonblocking, keepsRankOrder: true },
  'flat-nonblocking-1': { run: allToAllFlatNonblocking1, keepsRankOrder: true },
  'flat-nonblocking-2': { run: allToAllFlatNonblocking2, keepsRankOrder: true },
  'pairwise': { run: allToAllPairwise, keepsRankOrder: true },
  'bruck': { run: allToAllBruck, keepsRankOrder: true },
} satisfies AlgorithmsOf<'allToAll'>;
