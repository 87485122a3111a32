/** The scatter algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { scatterBinomial } from './binomial.js';
import { scatterFlatBlocking } from './flat-blocking.js';
import { scatterFlatNonblocking } from './flat-nonblocking.js';
import { scatterMst } from './mst.js';
import { scatterHierarchical } from './hierarchical.js';

export const scatterAlgorithms = {
  'binomial': { run: scatterBinomial, keepsRankOrder: true },
  'flat-blocking': { run: scatterFlatBlocking, keepsRankOrder: true },
  'flat-nonblocking': { run: scatterFlatNonblocking, keepsRankOrder: true },
  'mst': { run: scatterMst, keepsRankOrder: true },
  'hierarchical': { run: scatterHierarchical, keepsRankOrder: true, hierarchical: true },
} satisfies AlgorithmsOf<'scatter'>;
