/** The allGather algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { allGatherGatherBroadcast } from './gather-broadcast.js';

export const allGatherAlgorithms: AlgorithmsOf<'allGather'> = {
  'gather-broadcast': { run: allGatherGatherBroadcast, keepsRankOrder: true },
};
