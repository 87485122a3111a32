/**
 * The reductions' addon (native/reduce.cc), when it is built: the built-in reductions' typed-array
 * loops, compiled ahead of time (several times faster than V8's on large arrays). Without it the
 * same loops run in JavaScript. CCJS_NO_NATIVE_REDUCE=1 acts as if it were not built.
 */
import { createRequire } from 'node:module';
import type { TypedArray } from './reductions.js';

export interface ReduceNative {
  /** result[i] = a[i] OP b[i]: three typed arrays of one type and length; result may be a or b. */
  combine(operator: number, a: TypedArray, b: TypedArray, result: TypedArray): void;
}

/** The addon's operator codes (native/reduce.cc's Operator). */
export const NATIVE_OPERATORS: Readonly<Record<string, number>> = { SUM: 0, PROD: 1, MIN: 2, MAX: 3, LAND: 4, LOR: 5, BAND: 6, BOR: 7, BXOR: 8 };

/** Below this many elements a JavaScript loop is faster than a call into the addon (~150 ns). */
export const NATIVE_MIN_ELEMENTS = 128;

function load(): ReduceNative | undefined {
  if (process.env.CCJS_NO_NATIVE_REDUCE === '1') return undefined;
  try {
    return createRequire(import.meta.url)('../../build/Release/ccjs_reduce.node') as ReduceNative;
  } catch {
    return undefined;
  }
}

/** The addon, or undefined where it is not built (or switched off). */
export const reduceNative: ReduceNative | undefined = load();
