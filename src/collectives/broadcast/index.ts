/** The broadcast algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { broadcastBinomial } from './binomial.js';
import { broadcastFlatBlocking } from './flat-blocking.js';
import { broadcastFlatNonblocking } from './flat-nonblocking.js';
import { broadcastFourAry } from './four-ary.js';
import { broadcastMst } from './mst.js';
import { broadcastPipelineChain } from './pipeline-chain.js';
import { broadcastScatterAllgather } from './scatter-allgather.js';
import { broadcastHierarchical } from './hierarchical.js';
import { broadcastSharedMemory } from './shared-memory.js';

export const broadcastAlgorithms = {
  'binomial': { id: 0, run: broadcastBinomial, keepsRankOrder: true },
  'flat-blocking': { id: 1, run: broadcastFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { id: 2, run: broadcastFlatNonblocking, keepsRankOrder: true },
  'four-ary': { id: 3, run: broadcastFourAry, keepsRankOrder: true },
  'mst': { id: 4, run: broadcastMst, keepsRankOrder: true },
  'pipeline-chain': { id: 5, run: broadcastPipelineChain, keepsRankOrder: true },
  'scatter-allgather': { id: 6, run: broadcastScatterAllgather, keepsRankOrder: true },
  'hierarchical': { id: 7, run: broadcastHierarchical, keepsRankOrder: true, hierarchical: true },
  'shared-memory': { id: 8, run: broadcastSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'broadcast'>;
