/** The scan algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { scanLinear } from './linear.js';

export const scanAlgorithms: AlgorithmsOf<'scan'> = {
  'linear': { run: scanLinear, keepsRankOrder: true },
};
