/** The broadcast algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { broadcastBinomial } from './binomial.js';
import { broadcastFlatBlocking } from './flat-blocking.js';
import { broadcastFlatNonblocking } from './flat-nonblocking.js';
import { broadcastFourAry } from './four-ary.js';
import { broadcastMst } from './mst.js';
import { broadcastPipelineChain } from './pipeline-chain.js';
import { broadcastScatterAllgather } from './scatter-allgather.js';
import { broadcastHierarchical } from './hierarchical.js';

export const broadcastAlgorithms = {
  'binomial': { run: broadcastBinomial, keepsRankOrder: true },
  'flat-blocking': { run: broadcastFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { run: broadcastFlatNonblocking, keepsRankOrder: true },
  'four-ary': { run: broadcastFourAry, keepsRankOrder: true },
  'mst': { run: broadcastMst, keepsRankOrder: true },
  'pipeline-chain': { run: broadcastPipelineChain, keepsRankOrder: true },
  'scatter-allgather': { run: broadcastScatterAllgather, keepsRankOrder: true },
  'hierarchical': { run: broadcastHierarchical, keepsRankOrder: true, hierarchical: true },
} satisfies AlgorithmsOf<'broadcast'>;
