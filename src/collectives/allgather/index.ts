/** The allGather algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { allGatherGatherBroadcast } from './gather-broadcast.js';
import { allGatherFlatNonblocking } from './flat-nonblocking.js';
import { allGatherRecursiveDoubling } from './recursive-doubling.js';
import { allGatherBdeNonblocking } from './bde-nonblocking.js';
import { allGatherBucketBlocking } from './bucket-blocking.js';
import { allGatherBucketNonblocking } from './bucket-nonblocking.js';
import { allGatherBruck } from './bruck.js';
import { allGatherHierarchical } from './hierarchical.js';

export const allGatherAlgorithms = {
  'gather-broadcast': { run: allGatherGatherBroadcast, keepsRankOrder: true },
  'flat-nonblocking': { run: allGatherFlatNonblocking, keepsRankOrder: true },
  'recursive-doubling': { run: allGatherRecursiveDoubling, keepsRankOrder: true },
  'bde-nonblocking': { run: allGatherBdeNonblocking, keepsRankOrder: true },
  'bucket-blocking': { run: allGatherBucketBlocking, keepsRankOrder: true },
  'bucket-nonblocking': { run: allGatherBucketNonblocking, keepsRankOrder: true },
  'bruck': { run: allGatherBruck, keepsRankOrder: true },
  'hierarchical': { run: allGatherHierarchical, keepsRankOrder: true, hierarchical: true },
} satisfies AlgorithmsOf<'allGather'>;
