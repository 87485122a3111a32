/** The allToAll algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { allToAllFlat } from './flat.js';

export const allToAllAlgorithms: AlgorithmsOf<'allToAll'> = {
  'flat': { run: allToAllFlat, keepsRankOrder: true },
};
