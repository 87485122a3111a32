/** The reduceScatter algorithms by name, with their wire ids (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithm.js';
import { reduceScatterReduceScatter } from './reduce-scatter.js';
import { reduceScatterBdeBlocking } from './bde-blocking.js';
import { reduceScatterBdeNonBlocking } from './bde-nonblocking.js';
import { reduceScatterBucketBlocking } from './bucket-blocking.js';
import { reduceScatterBucketNonBlocking } from './bucket-nonblocking.js';
import { reduceScatterSharedMemory } from './shared-memory.js';

export const reduceScatterAlgorithms = {
  'reduce-scatter': { id: 0, run: reduceScatterReduceScatter, keepsRankOrder: true },
  'bde-blocking': { id: 1, run: reduceScatterBdeBlocking, keepsRankOrder: true },
  'bde-nonblocking': { id: 2, run: reduceScatterBdeNonBlocking, keepsRankOrder: true },
  'bucket-blocking': { id: 3, run: reduceScatterBucketBlocking, keepsRankOrder: false },
  'bucket-nonblocking': { id: 4, run: reduceScatterBucketNonBlocking, keepsRankOrder: false },
  'shared-memory': { id: 5, run: reduceScatterSharedMemory, keepsRankOrder: true, sharedMemory: true },
} satisfies AlgorithmsOf<'reduceScatter'>;
