/** The barrier algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { barrierDissemination } from './dissemination.js';
import { barrierGatherBroadcast } from './gather-broadcast.js';
import { barrierGatherBroadcastFlatFourAry } from './gather-broadcast-flat-fourary.js';
import { barrierHypercube } from './hypercube.js';
import { barrierHierarchical } from './hierarchical.js';

export const barrierAlgorithms = {
  'hypercube': { run: barrierHypercube, keepsRankOrder: true },
  'gather-broadcast': { run: barrierGatherBroadcast, keepsRankOrder: true },
  'gather-broadcast-flat-fourary': { run: barrierGatherBroadcastFlatFourAry, keepsRankOrder: true },
  'dissemination': { run: barrierDissemination, keepsRankOrder: true },
  'hierarchical': { run: barrierHierarchical, keepsRankOrder: true, hierarchical: true },
} satisfies AlgorithmsOf<'barrier'>;
