/** The gather algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { gatherBinomial } from './binomial.js';
import { gatherFlatBlocking } from './flat-blocking.js';
import { gatherFlatNonblocking } from './flat-nonblocking.js';
import { gatherFlatNonblocking1 } from './flat-nonblocking-1.js';
import { gatherMst } from './mst.js';
import { gatherHierarchical } from './hierarchical.js';
import { gatherSharedMemory } from './shared-memory.js';

export const gatherAlgorithms = {
  'binomial': { id: 0, run: gatherBinomial, keepsRankOrder: true },
  'flat-blocking': { id: 1, run: gatherFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { id: 2, run: gatherFlatNonblocking, keepsRankOrder: true },
  'flat-nonblocking-1': { id: 3, run: gatherFlatNonblocking1, keepsRankOrder: true },
  'mst': { id: 4, run: gatherMst, keepsRankOrder: true },
  'hierarchical': { id: 5, run: gatherHierarchical, keepsRankOrder: true, hierarchical: true },
  'shared-memory': { id: 6, run: gatherSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'gather'>;
