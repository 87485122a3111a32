/** The gather algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { gatherBinomial } from './binomial.js';
import { gatherFlatBlocking } from './flat-blocking.js';
import { gatherFlatNonblocking } from './flat-nonblocking.js';
import { gatherFlatNonblocking1 } from './flat-nonblocking-1.js';
import { gatherMst } from './mst.js';
import { gatherHierarchical } from './hierarchical.js';

export const gatherAlgorithms = {
  'binomial': { run: gatherBinomial, keepsRankOrder: true },
  'flat-blocking': { run: gatherFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { run: gatherFlatNonblocking, keepsRankOrder: true },
  'flat-nonblocking-1': { run: gatherFlatNonblocking1, keepsRankOrder: true },
  'mst': { run: gatherMst, keepsRankOrder: true },
  'hierarchical': { run: gatherHierarchical, keepsRankOrder: true, hierarchical: true },
} satisfies AlgorithmsOf<'gather'>;
