/**
 * CCJ's array support as a DividableData object: a plain or typed array divided into contiguous
 * blocks, one per member (docs/API.md, "Dividable data").
 */
import { registerClass } from '../src/serialization/index.js';
import { amount, blockRange, checkBlockShape, describeType, type DividableData } from './dividable-data.js';
import type { TypedArray } from '../reduction/reductions.js';

export type { TypedArray };

/** What a DividableArray divides. */
export type DividableArrayData = unknown[] | TypedArray;

/** The constructor of a result array: `Array` or a typed array class. */
export type ArrayConstructorOf<A extends DividableArrayData> = new (length: number) => A;

function isTypedArray(value: unknown): value is TypedArray {
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

/**
 * A plain or typed array as {@link DividableData}: element i of n is block i of the array, blocks
 * as even as possible (the first `length % n` one element longer). Blocks of typed arrays are
 * views (`subarray`), of plain arrays copies (`slice`).
 *
 * @example
 * ```ts
 * const whole = rank === 0 ? new DividableArray(Float64Array.from({ length: 10 }, (_, i) => i)) : null;
 * const mine = await member.scatter(group, whole, 0);            // a Float64Array block
 * ```
 */
export class DividableArray<A extends DividableArrayData = DividableArrayData> implements DividableData<A> {
  /** `blockRange` under the name the API suggests, for code that only imports this class. */
  static readonly blockRange = blockRange;

  /** The whole array; setElementAt writes into it. */
  readonly array: A;

  /** @throws {TypeError} unless `array` is a plain or typed array. */
  constructor(array: A) {
    if (!Array.isArray(array) && !isTypedArray(array)) {
      throw new TypeError(`DividableArray needs a plain or typed array, got ${describeType(array)}`);
    }
    this.array = array;
  }

  /**
   * A result for gather or allToAll: `length` zeros for a typed array class, or a plain array
   * of `length` holes for `Array`, which setElementAt then fills.
   */
  static ofLength<A extends DividableArrayData>(length: number, type: ArrayConstructorOf<A>): DividableArray<A> {
    return new DividableArray(new type(length));
  }

  /** @internal Rebuilds a DividableArray that travelled; the array arrives as its own type. */
  static fromCCJS(array: unknown): DividableArray {
    return new DividableArray(array as DividableArrayData);
  }

  /** @internal What travels: the array. */
  toCCJS(): A {
    return this.array;
  }

  /**
   * Block `index` of `groupSize`: a view for typed arrays, a copy for plain arrays.
   *
   * @throws {RangeError} unless `groupSize` >= 1 and `index` is in [0, groupSize).
   */
  elementAt(index: number, groupSize: number): A {
    const [start, end] = blockRange(this.array.length, index, groupSize);
    // Both keep the array's own class (species), so a Buffer's block is a Buffer.
    return (Array.isArray(this.array) ? this.array.slice(start, end) : this.array.subarray(start, end)) as A;
  }

  /**
   * Copies `block` into block `index` of `groupSize`.
   *
   * @throws {TypeError} unless `block` is a plain or typed array.
   * @throws {RangeError} unless it has that block's length.
   */
  setElementAt(index: number, groupSize: number, block: A): void {
    const [start, end] = blockRange(this.array.length, index, groupSize);
    if (!Array.isArray(block) && !isTypedArray(block)) {
      throw new TypeError(`DividableArray.setElementAt: block ${index} must be a plain or typed array, got ${describeType(block)}`);
    }
    checkBlockShape('DividableArray.setElementAt', index, groupSize, amount(end - start, 'element'), amount(block.length, 'element'));
    if (Array.isArray(this.array)) {
      for (let offset = 0; offset < block.length; offset++) this.array[start + offset] = block[offset];
    } else {
      // The union of `set` signatures accepts no argument; mixing bigint and number arrays fails at run time, as it should.
      (this.array as { set(source: ArrayLike<unknown>, offset: number): void }).set(block, start);
    }
  }
}

registerClass(DividableArray, 'ccjs.DividableArray');
