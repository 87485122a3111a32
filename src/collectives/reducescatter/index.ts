/** The reduceScatter algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { reduceScatterReduceScatter } from './reduce-scatter.js';

export const reduceScatterAlgorithms: AlgorithmsOf<'reduceScatter'> = {
  'reduce-scatter': { run: reduceScatterReduceScatter, keepsRankOrder: true },
};
