/** The barrier algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { barrierHypercube } from './hypercube.js';

export const barrierAlgorithms: AlgorithmsOf<'barrier'> = {
  'hypercube': { run: barrierHypercube, keepsRankOrder: true },
};
