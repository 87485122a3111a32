/** The allReduce algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { allReduceReduceBroadcast } from './reduce-broadcast.js';

export const allReduceAlgorithms: AlgorithmsOf<'allReduce'> = {
  'reduce-broadcast': { run: allReduceReduceBroadcast, keepsRankOrder: true },
};
