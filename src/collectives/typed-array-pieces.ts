/**
 * Moving a typed array in pieces (broadcast pipeline-chain and scatter-allgather, allReduce ring
 * and Rabenseifner). In a broadcast only the root knows the value, so the first message of a
 * call is a header that says either "here is the whole value" (anything but a plain typed array,
 * sent in one piece) or the length of the typed array whose pieces follow. Pieces are `subarray`
 * views of the sender's array (no copies) and each receiver assembles them into one new array of
 * the same type.
 */
import type { TypedArray } from '../../reduction/reductions.js';
import { TYPED_ARRAY_TYPES } from '../base/typed-arrays.js';

export type PiecesHeader<T> =
  | { readonly kind: 'whole'; readonly value: T }
  | { readonly kind: 'pieces'; readonly length: number; readonly pieces: number };

const PLAIN_TYPED_ARRAYS: ReadonlySet<object> = new Set(TYPED_ARRAY_TYPES.map((type) => type.prototype));

/** A typed array of one of the standard types (not a Buffer, a DataView or another subclass). */
export function isPlainTypedArray(value: unknown): value is TypedArray {
  return typeof value === 'object' && value !== null && PLAIN_TYPED_ARRAYS.has(Object.getPrototypeOf(value) as object);
}

/** The header the root sends: `pieces(array)` pieces for a plain typed array, else the whole value. */
export function headerFor<T>(value: T, pieces: (array: TypedArray) => number): PiecesHeader<T> {
  return isPlainTypedArray(value) ? { kind: 'pieces', length: value.length, pieces: pieces(value) } : { kind: 'whole', value };
}

/** `length` elements cut into `count` balanced, contiguous pieces (some empty when count > length). */
export class PieceLayout {
  constructor(
    readonly length: number,
    readonly count: number,
  ) {}

  /** First element of piece `index` (`length` for index `count`). */
  start(index: number): number {
    return Math.floor((index * this.length) / this.count);
  }

  /** Pieces [first, end) as a view of `array`, which holds the pieces from `arrayFirst` on. */
  view(array: TypedArray, first: number, end: number, arrayFirst = 0): TypedArray {
    const offset = this.start(arrayFirst);
    return array.subarray(this.start(first) - offset, this.start(end) - offset);
  }
}

/** Below this many bytes a zero-filled array costs no more (V8 keeps small ones on its heap). */
const UNFILLED_BYTES = 64 * 1024;

/**
 * A new array of `sample`'s type with `length` elements that its caller fills whole (the pieces
 * of one value) before anyone reads it: a large one is not zero-filled first (a megabyte of
 * memset per collective call otherwise).
 */
export function allocateToFill(sample: TypedArray, length: number): TypedArray {
  const constructor = Object.getPrototypeOf(sample).constructor as (new (length: number) => TypedArray) & (new (buffer: ArrayBuffer, byteOffset: number, length: number) => TypedArray) & { BYTES_PER_ELEMENT: number };
  const bytes = length * constructor.BYTES_PER_ELEMENT;
  if (bytes < UNFILLED_BYTES) return new constructor(length);
  return new constructor(Buffer.allocUnsafeSlow(bytes).buffer as ArrayBuffer, 0, length);
}

/** Copies `source` into `target` from element `elementOffset` on (same element type). */
export function copyInto(target: TypedArray, source: TypedArray, elementOffset: number): void {
  const bytes = new Uint8Array(target.buffer, target.byteOffset, target.byteLength);
  bytes.set(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), elementOffset * target.BYTES_PER_ELEMENT);
}
