/** The barrier algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { barrierDissemination } from './dissemination.js';
import { barrierGatherBroadcast } from './gather-broadcast.js';
import { barrierGatherBroadcastFlatFourAry } from './gather-broadcast-flat-fourary.js';
import { barrierHypercube } from './hypercube.js';
import { barrierHierarchical } from './hierarchical.js';
import { barrierSharedMemory } from './shared-memory.js';

export const barrierAlgorithms = {
  'hypercube': { id: 0, run: barrierHypercube, keepsRankOrder: true },
  'gather-broadcast': { id: 1, run: barrierGatherBroadcast, keepsRankOrder: true },
  'gather-broadcast-flat-fourary': { id: 2, run: barrierGatherBroadcastFlatFourAry, keepsRankOrder: true },
  'dissemination': { id: 3, run: barrierDissemination, keepsRankOrder: true },
  'hierarchical': { id: 4, run: barrierHierarchical, keepsRankOrder: true, hierarchical: true },
  'shared-memory': { id: 5, run: barrierSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'barrier'>;
