/** The reduce algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { reduceBinomial } from './binomial.js';

export const reduceAlgorithms: AlgorithmsOf<'reduce'> = {
  'binomial': { run: reduceBinomial, keepsRankOrder: true },
};
