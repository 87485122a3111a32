/** The scan algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { scanLinear } from './linear.js';
import { scanFlatNonBlocking } from './flat-nonblocking.js';
import { scanRecursiveDoubling } from './recursive-doubling.js';
import { scanSharedMemory } from './shared-memory.js';

export const scanAlgorithms = {
  'linear': { id: 0, run: scanLinear, keepsRankOrder: true },
  'flat-nonblocking': { id: 1, run: scanFlatNonBlocking, keepsRankOrder: true },
  'recursive-doubling': { id: 2, run: scanRecursiveDoubling, keepsRankOrder: true },
  'shared-memory': { id: 3, run: scanSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'scan'>;
