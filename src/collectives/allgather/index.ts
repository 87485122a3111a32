/** The allGather algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { allGatherGatherBroadcast } from './gather-broadcast.js';
import { allGatherFlatNonblocking } from './flat-nonblocking.js';
import { allGatherRecursiveDoubling } from './recursive-doubling.js';
import { allGatherBdeNonblocking } from './bde-nonblocking.js';
import { allGatherBucketBlocking } from './bucket-blocking.js';
import { allGatherBucketNonblocking } from './bucket-nonblocking.js';
import { allGatherBruck } from './bruck.js';
import { allGatherHierarchical } from './hierarchical.js';
import { allGatherSharedMemory } from './shared-memory.js';

export const allGatherAlgorithms = {
  'gather-broadcast': { id: 0, run: allGatherGatherBroadcast, keepsRankOrder: true },
  'flat-nonblocking': { id: 1, run: allGatherFlatNonblocking, keepsRankOrder: true },
  'recursive-doubling': { id: 2, run: allGatherRecursiveDoubling, keepsRankOrder: true },
  'bde-nonblocking': { id: 3, run: allGatherBdeNonblocking, keepsRankOrder: true },
  'bucket-blocking': { id: 4, run: allGatherBucketBlocking, keepsRankOrder: true },
  'bucket-nonblocking': { id: 5, run: allGatherBucketNonblocking, keepsRankOrder: true },
  'bruck': { id: 6, run: allGatherBruck, keepsRankOrder: true },
  'hierarchical': { id: 7, run: allGatherHierarchical, keepsRankOrder: true, hierarchical: true },
  'shared-memory': { id: 8, run: allGatherSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'allGather'>;
