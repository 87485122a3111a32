/** The scatter algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { scatterBinomial } from './binomial.js';

export const scatterAlgorithms: AlgorithmsOf<'scatter'> = {
  'binomial': { run: scatterBinomial, keepsRankOrder: true },
};
