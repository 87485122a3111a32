/** The broadcast algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { broadcastBinomial } from './binomial.js';

export const broadcastAlgorithms: AlgorithmsOf<'broadcast'> = {
  'binomial': { run: broadcastBinomial, keepsRankOrder: true },
};
