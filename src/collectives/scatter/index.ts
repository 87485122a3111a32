/** The scatter algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { scatterBinomial } from './binomial.js';
import { scatterFlatBlocking } from './flat-blocking.js';
import { scatterFlatNonblocking } from './flat-nonblocking.js';
import { scatterMst } from './mst.js';
import { scatterHierarchical } from './hierarchical.js';
import { scatterSharedMemory } from './shared-memory.js';

export const scatterAlgorithms = {
  'binomial': { id: 0, run: scatterBinomial, keepsRankOrder: true },
  'flat-blocking': { id: 1, run: scatterFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { id: 2, run: scatterFlatNonblocking, keepsRankOrder: true },
  'mst': { id: 3, run: scatterMst, keepsRankOrder: true },
  'hierarchical': { id: 4, run: scatterHierarchical, keepsRankOrder: true, hierarchical: true },
  'shared-memory': { id: 5, run: scatterSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'scatter'>;
