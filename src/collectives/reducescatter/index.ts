/** The reduceScatter algorithms by name (one file each in this folder). */
import type { AlgorithmsOf } from '../algorithms.js';
import { reduceScatterReduceScatter } from './reduce-scatter.js';
import { reduceScatterBdeBlocking } from './bde-blocking.js';
import { reduceScatterBdeNonBlocking } from './bde-nonblocking.js';
import { reduceScatterBucketBlocking } from './bucket-blocking.js';
import { reduceScatterBucketNonBlocking } from './bucket-nonblocking.js';

export const reduceScatterAlgorithms = {
  'reduce-scatter': { run: reduceScatterReduceScatter, keepsRankOrder: true },
  'bde-blocking': { run: reduceScatterBdeBlocking, keepsRankOrder: true },
  'bde-nonblocking': { run: reduceScatterBdeNonBlocking, keepsRankOrder: true },
  'bucket-blocking': { run: reduceScatterBucketBlocking, keepsRankOrder: false },
  'bucket-nonblocking': { run: reduceScatterBucketNonBlocking, keepsRankOrder: false },
} satisfies AlgorithmsOf<'reduceScatter'>;
