/** The allToAll algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { allToAllFlat } from './flat.js';
import { allToAllFlatBlocking } from './flat-blocking.js';
import { allToAllFlatNonblocking } from './flat-nonblocking.js';
import { allToAllFlatNonblocking1 } from './flat-nonblocking-1.js';
import { allToAllFlatNonblocking2 } from './flat-nonblocking-2.js';
import { allToAllPairwise } from './pairwise.js';
import { allToAllBruck } from './bruck.js';
import { allToAllSharedMemory } from './shared-memory.js';

export const allToAllAlgorithms = {
  'flat': { id: 0, run: allToAllFlat, keepsRankOrder: true },
  'flat-blocking': { id: 1, run: allToAllFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { id: 2, run: allToAllFlatNonblocking, keepsRankOrder: true },
  'flat-nonblocking-1': { id: 3, run: allToAllFlatNonblocking1, keepsRankOrder: true },
  'flat-nonblocking-2': { id: 4, run: allToAllFlatNonblocking2, keepsRankOrder: true },
  'pairwise': { id: 5, run: allToAllPairwise, keepsRankOrder: true },
  'bruck': { id: 6, run: allToAllBruck, keepsRankOrder: true },
  'shared-memory': { id: 7, run: allToAllSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'allToAll'>;
