/**
 * Whether 'rabenseifner' and 'ring' may cut a value into blocks and reduce the blocks apart:
 * only for a plain typed array under a built-in element-wise reduction (SUM ... BXOR), whose
 * result on a block is that block of the result. A user-defined reduction of typed arrays need
 * not be element-wise (a polynomial product, say), so its values are reduced whole.
 */
import { Reductions } from '../../../reduction/reductions.js';
import type { TypedArray } from '../../../reduction/reductions.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { isPlainTypedArray } from '../typed-array-pieces.js';

const ELEMENTWISE: ReadonlySet<object> = new Set([
  Reductions.SUM,
  Reductions.PROD,
  Reductions.MIN,
  Reductions.MAX,
  Reductions.LAND,
  Reductions.LOR,
  Reductions.BAND,
  Reductions.BOR,
  Reductions.BXOR,
]);

export interface Blockwise {
  readonly array: TypedArray;
  readonly op: ReductionObject<TypedArray>;
}

/** `value` and `op` as a typed array and its element-wise reduction, or undefined if they are not. */
export function blockwise<T>(value: T, op: ReductionObject<T>): Blockwise | undefined {
  if (!isPlainTypedArray(value) || !ELEMENTWISE.has(op)) return undefined;
  return { array: value, op: op as unknown as ReductionObject<TypedArray> };
}
