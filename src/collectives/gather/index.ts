/** The gather algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { gatherBinomial } from './binomial.js';

export const gatherAlgorithms: AlgorithmsOf<'gather'> = {
  'binomial': { run: gatherBinomial, keepsRankOrder: true },
};
