/** The scan algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { scanLinear } from './linear.js';
import { scanFlatNonBlocking } from './flat-nonblocking.js';
import { scanRecursiveDoubling } from './recursive-doubling.js';

export const scanAlgorithms = {
  'linear': { run: scanLinear, keepsRankOrder: true },
  'flat-nonblocking': { run: scanFlatNonBlocking, keepsRankOrder: true },
  'recursive-doubling': { run: scanRecursiveDoubling, keepsRankOrder: true },
} satisfies AlgorithmsOf<'scan'>;
