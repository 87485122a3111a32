import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { Reductions, reductionName, toReductionObject, type Located, type ReductionObject, type TypedArray } from '../reduction/index.js';
import { reduceInto } from '../reduction/reductions.js';
import { NATIVE_MIN_ELEMENTS, reduceNative } from '../reduction/native.js';
import { TYPED_ARRAY_TYPES } from '../src/base/typed-arrays.js';

type NumberTypedArray = Exclude<TypedArray, BigInt64Array | BigUint64Array>;
type BigIntTypedArray = BigInt64Array | BigUint64Array;
type ElementwiseName = Exclude<keyof typeof Reductions, 'MINLOC' | 'MAXLOC'>;

const BIGINT_ARRAY_TYPES: readonly (new (values: ArrayLike<bigint>) => BigIntTypedArray)[] = [BigInt64Array, BigUint64Array];
/** The library's typed-array types but the bigint ones. */
const NUMBER_ARRAY_TYPES = TYPED_ARRAY_TYPES.filter((type) => !(BIGINT_ARRAY_TYPES as readonly unknown[]).includes(type)) as readonly (new (values: ArrayLike<number>) => NumberTypedArray)[];

/** The sequential folds below are what the built-ins must agree with, element by element. */
const REFERENCES: Record<ElementwiseName, { number: (x: number, y: number) => number; bigint: (x: bigint, y: bigint) => bigint }> = {
  SUM: { number: (x, y) => x + y, bigint: (x, y) => x + y },
  PROD: { number: (x, y) => x * y, bigint: (x, y) => x * y },
  MIN: { number: (x, y) => Math.min(x, y), bigint: (x, y) => (x < y ? x : y) },
  MAX: { number: (x, y) => Math.max(x, y), bigint: (x, y) => (x > y ? x : y) },
  LAND: { number: (x, y) => (x && y ? 1 : 0), bigint: (x, y) => (x && y ? 1n : 0n) },
  LOR: { number: (x, y) => (x || y ? 1 : 0), bigint: (x, y) => (x || y ? 1n : 0n) },
  BAND: { number: (x, y) => x & y, bigint: (x, y) => x & y },
  BOR: { number: (x, y) => x | y, bigint: (x, y) => x | y },
  BXOR: { number: (x, y) => x ^ y, bigint: (x, y) => x ^ y },
};
const REDUCTION_NAMES = Object.keys(Reductions) as (keyof typeof Reductions)[];
const ELEMENTWISE_NAMES = Object.keys(REFERENCES) as ElementwiseName[];
const LOGICAL_NAMES: readonly ElementwiseName[] = ['LAND', 'LOR'];
const BITWISE_NAMES: readonly ElementwiseName[] = ['BAND', 'BOR', 'BXOR'];

const OPERAND_COUNT = 5;
const OPERAND_LENGTH = 64;

/**
 * Deterministic values in -11..11, zeros included so that LAND/LOR see both truth values; small
 * enough that the products of the folds stay below 2^53, where the reference's `x * y` is exact.
 */
function operandValues(operand: number): number[] {
  return Array.from({ length: OPERAND_LENGTH }, (_, i) => ((i * 7919 + operand * 104729) % 23) - 11);
}

interface Indexed<E> {
  readonly length: number;
  [index: number]: E;
}

/** Folds `operands` into `accumulator` (holding the first operand) step by step, in operand order. */
function foldInto<E>(accumulator: Indexed<E>, operands: readonly Indexed<E>[], combine: (x: E, y: E) => E): void {
  for (const operand of operands.slice(1)) {
    for (let i = 0; i < accumulator.length; i++) accumulator[i] = combine(accumulator[i], operand[i]);
  }
}

/** Members' values combined in rank order, as a non-commutative reduction requires. */
function foldInRankOrder<T>(values: readonly T[], operation: ReductionObject<T>): T {
  return values.reduce((accumulated, value) => operation.reduce(accumulated, value));
}

/** The table-driven tests apply every built-in to every shape, on purpose also to unsupported ones. */
function untyped(name: keyof typeof Reductions): ReductionObject<unknown> {
  return Reductions[name] as ReductionObject<unknown>;
}

function expectTypeErrorNaming(action: () => unknown, ...parts: string[]): void {
  expect(action).to.throw(TypeError);
  for (const part of parts) expect(action).to.throw(part);
}

describe('Reductions', () => {
  it('are frozen, commutative and named after themselves', () => {
    expect(Object.isFrozen(Reductions)).to.equal(true);
    for (const name of REDUCTION_NAMES) {
      const reduction = untyped(name);
      expect(Object.isFrozen(reduction), name).to.equal(true);
      expect(reduction.name).to.equal(name);
      expect(reduction.commutative).to.equal(true);
      expect(reductionName(reduction)).to.equal(name);
    }
  });

  it('serve as ReductionObjects of each type in their domain', () => {
    const sum: ReductionObject<Float64Array> = Reductions.SUM;
    const product: ReductionObject<bigint> = Reductions.PROD;
    const conjunction: ReductionObject<boolean> = Reductions.LAND;
    const minimum: ReductionObject<Located<number>[]> = Reductions.MINLOC;
    expect(sum.reduce(Float64Array.of(1), Float64Array.of(2))).to.deep.equal(Float64Array.of(3));
    expect(product.reduce(6n, 7n)).to.equal(42n);
    expect(conjunction.reduce(true, false)).to.equal(false);
    expect(minimum.reduce([{ value: 1, index: 0 }], [{ value: 0, index: 1 }])).to.deep.equal([{ value: 0, index: 1 }]);
  });

  describe('on numbers and plain arrays of numbers', () => {
    for (const name of ELEMENTWISE_NAMES) {
      it(name, () => {
        const operands = Array.from({ length: OPERAND_COUNT }, (_, k) => operandValues(k));
        const expected = operands[0].slice();
        foldInto(expected, operands, REFERENCES[name].number);
        const expectedResults = LOGICAL_NAMES.includes(name) ? expected.map(Boolean) : expected;
        expect(foldInRankOrder(operands, untyped(name))).to.deep.equal(expectedResults);
        for (let i = 0; i < OPERAND_LENGTH; i++) {
          expect(foldInRankOrder(operands.map((operand) => operand[i]), untyped(name)), `element ${i}`).to.equal(expectedResults[i]);
        }
      });
    }

    it('BAND, BOR and BXOR keep integers beyond 32 bits', () => {
      const high = 2 ** 40;
      expect(Reductions.BAND.reduce(high + 3, high + 1)).to.equal(high + 1);
      expect(Reductions.BOR.reduce(high, 1)).to.equal(high + 1);
      expect(Reductions.BXOR.reduce(high + 1, 1)).to.equal(high);
      expect(Reductions.BAND.reduce(-1, 0xffffffff)).to.equal(0xffffffff);
    });

    it('MIN and MAX keep fractions, -0 and NaN as Math.min and Math.max do', () => {
      expect(Reductions.MIN.reduce(0.5, -0.25)).to.equal(-0.25);
      expect(Object.is(Reductions.MIN.reduce(0, -0), -0)).to.equal(true);
      expect(Reductions.MAX.reduce(NaN, 1)).to.be.NaN;
    });
  });

  describe('on bigints', () => {
    for (const name of ELEMENTWISE_NAMES) {
      it(name, () => {
        const operands = Array.from({ length: OPERAND_COUNT }, (_, k) => operandValues(k).map((value) => BigInt(value) * 2n ** 40n));
        const expected = operands[0].slice();
        foldInto(expected, operands, REFERENCES[name].bigint);
        for (let i = 0; i < OPERAND_LENGTH; i++) {
          const expectedResult = LOGICAL_NAMES.includes(name) ? Boolean(expected[i]) : expected[i];
          expect(foldInRankOrder(operands.map((operand) => operand[i]), untyped(name)), `element ${i}`).to.equal(expectedResult);
        }
      });
    }
  });

  describe('LAND and LOR', () => {
    it('give booleans for booleans, numbers and bigints, mixed or not', () => {
      expect(Reductions.LAND.reduce(true, true)).to.equal(true);
      expect(Reductions.LAND.reduce(true, false)).to.equal(false);
      expect(Reductions.LOR.reduce(false, false)).to.equal(false);
      expect(Reductions.LOR.reduce(false, true)).to.equal(true);
      expect(Reductions.LAND.reduce<number | boolean>(true, 5)).to.equal(true);
      expect(Reductions.LOR.reduce<bigint | boolean>(0n, false)).to.equal(false);
      expect(Reductions.LAND.reduce([true, 1, 0n], [2, false, 3n])).to.deep.equal([true, false, false]);
    });

    it('give element-wise 0 and 1 of the same type for typed arrays', () => {
      expect(Reductions.LAND.reduce(Float64Array.of(0.5, 0, NaN), Float64Array.of(-2, 1, 1))).to.deep.equal(Float64Array.of(1, 0, 0));
      expect(Reductions.LOR.reduce(BigUint64Array.of(0n, 0n, 7n), BigUint64Array.of(0n, 9n, 0n))).to.deep.equal(BigUint64Array.of(0n, 1n, 1n));
    });
  });

  describe('on typed arrays', () => {
    for (const Type of NUMBER_ARRAY_TYPES) {
      for (const name of ELEMENTWISE_NAMES) {
        const isFloat = Type === Float32Array || Type === Float64Array;
        // In a Uint32Array a negative value wraps to near 2^32, and products of such pass 2^53:
        // magnitudes there (the exact 32-bit products of PROD have a test of their own).
        const element = isFloat ? (value: number) => value / 4 : Type === Uint32Array ? Math.abs : (value: number) => value;
        const operands = Array.from({ length: OPERAND_COUNT }, (_, k) => new Type(operandValues(k).map(element)));
        if (isFloat && BITWISE_NAMES.includes(name)) {
          it(`${name} rejects ${Type.name}`, () => {
            expectTypeErrorNaming(() => untyped(name).reduce(operands[0], operands[1]), name, Type.name, 'integer');
          });
          continue;
        }
        it(`${name} on ${Type.name}`, () => {
          // Stored after every step, like the results of the reduction itself.
          const expected = new Type(operands[0]);
          foldInto(expected, operands, REFERENCES[name].number);
          const result = foldInRankOrder<unknown>(operands, untyped(name));
          expect(result).to.be.instanceOf(Type);
          expect(result).to.deep.equal(expected);
        });
      }
    }

    for (const Type of BIGINT_ARRAY_TYPES) {
      for (const name of ELEMENTWISE_NAMES) {
        it(`${name} on ${Type.name}`, () => {
          const operands = Array.from({ length: OPERAND_COUNT }, (_, k) => new Type(operandValues(k).map((value) => BigInt(value) << 50n)));
          const expected = new Type(operands[0]);
          foldInto(expected, operands, REFERENCES[name].bigint);
          const result = foldInRankOrder<unknown>(operands, untyped(name));
          expect(result).to.be.instanceOf(Type);
          expect(result).to.deep.equal(expected);
        });
      }
    }

    it('PROD multiplies 32-bit integers exactly modulo 2^32', () => {
      const factors = [0x7fffffff, -0x7ffffffd, 0x12345678];
      const exact = (x: number, y: number, bits: 'signed' | 'unsigned'): number => {
        const product = BigInt(x) * BigInt(y);
        return Number(bits === 'signed' ? BigInt.asIntN(32, product) : BigInt.asUintN(32, product));
      };
      const signed = Reductions.PROD.reduce(Int32Array.from(factors), Int32Array.from(factors.slice().reverse()));
      expect(Array.from(signed)).to.deep.equal(factors.map((x, i) => exact(x, factors[factors.length - 1 - i], 'signed')));
      const unsigned = Reductions.PROD.reduce(Uint32Array.from(factors), Uint32Array.from(factors));
      expect(Array.from(unsigned)).to.deep.equal(Array.from(Uint32Array.from(factors), (x) => exact(x, x, 'unsigned')));
    });

    it('give a new array of the standard type, also for a Buffer', () => {
      const bytes = Uint8Array.of(1, 2);
      const result = Reductions.SUM.reduce<Uint8Array>(Buffer.from([250, 3]), bytes);
      expect(result).to.not.equal(bytes);
      expect(result).to.deep.equal(Uint8Array.of(251, 5));
    });

    it('reduce nested plain arrays of typed arrays element-wise', () => {
      const result = Reductions.MAX.reduce([Int16Array.of(1, 9), [3, 4n]], [Int16Array.of(5, 2), [6, 1n]]);
      expect(result).to.deep.equal([Int16Array.of(5, 9), [6, 4n]]);
    });
  });

  describe('the native loops (native/reduce.cc)', () => {
    it('are built, unless switched off', function () {
      if (process.env.CCJS_NO_NATIVE_REDUCE === '1') this.skip();
      expect(reduceNative, 'the reductions addon (npm install builds it)').to.not.equal(undefined);
    });

    // A long array goes through the addon, pieces shorter than NATIVE_MIN_ELEMENTS through the
    // JavaScript loops (checked against the references above): the two must agree on every element.
    const LENGTH = 4 * NATIVE_MIN_ELEMENTS + 5;
    const PIECE = NATIVE_MIN_ELEMENTS - 1;
    let seed = 0x9e3779b9;
    const random = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    /** Values over the type's whole range, its extremes, zeros and (for floats) NaN, ±0, ±Infinity, huge and tiny ones. */
    function edgeValues(Type: (typeof NUMBER_ARRAY_TYPES)[number] | (typeof BIGINT_ARRAY_TYPES)[number]): TypedArray {
      const array = new (Type as unknown as new (length: number) => TypedArray)(LENGTH);
      const floats = [0, -0, NaN, Infinity, -Infinity, 1e300, -1e300, 5e-324, 1.5, -2.25, 3.4e38, 1e-45];
      for (let i = 0; i < LENGTH; i += 1) {
        const r = random();
        if (array instanceof BigInt64Array || array instanceof BigUint64Array) {
          array[i] = i % 7 === 0 ? 0n : (BigInt(Math.floor(r * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32));
        } else if (array instanceof Float32Array || array instanceof Float64Array) {
          array[i] = i % 3 === 0 ? (floats[Math.floor(r * floats.length)] as number) : (r - 0.5) * 2 ** Math.floor(random() * 40 - 20);
        } else {
          // Any bit pattern: the store wraps it into the type's range (extremes and 0 included).
          array[i] = i % 5 === 0 ? [0, -1, 2 ** 31, 2 ** 31 - 1, 255, 128, 32767][i % 7] as number : Math.floor(r * 2 ** 32);
        }
      }
      return array;
    }
    function inPieces(op: ReductionObject<TypedArray>, a: TypedArray, b: TypedArray): TypedArray {
      const result = new (a.constructor as new (length: number) => TypedArray)(a.length);
      for (let start = 0; start < a.length; start += PIECE) {
        const piece = op.reduce(a.subarray(start, start + PIECE), b.subarray(start, start + PIECE));
        (result as Float64Array).set(piece as Float64Array, start);
      }
      return result;
    }
    function expectSameElements(actual: TypedArray, expected: TypedArray, what: string): void {
      expect(actual.length, what).to.equal(expected.length);
      for (let i = 0; i < expected.length; i += 1) {
        const shown = (value: unknown): string => (Object.is(value, -0) ? '-0' : String(value));
        if (!Object.is(actual[i], expected[i])) expect.fail(`${what}: element ${i} is ${shown(actual[i])}, the JavaScript loop gives ${shown(expected[i])}`);
      }
    }

    for (const Type of [...NUMBER_ARRAY_TYPES, ...BIGINT_ARRAY_TYPES]) {
      for (const name of ELEMENTWISE_NAMES) {
        const isFloat = Type === Float32Array || Type === Float64Array;
        if (isFloat && BITWISE_NAMES.includes(name)) continue;
        it(`${name} on ${Type.name} agrees with the JavaScript loop, also written in place`, () => {
          const op = Reductions[name] as ReductionObject<TypedArray>;
          const a = edgeValues(Type);
          const b = edgeValues(Type);
          const expected = inPieces(op, a, b);
          expectSameElements(op.reduce(a, b), expected, `${name} on ${Type.name}`);
          const left = a.slice();
          expect(reduceInto(op, left, b, left), 'the result is the operand written into').to.equal(left);
          expectSameElements(left, expected, `${name} on ${Type.name} into its left operand`);
          const right = b.slice();
          expect(reduceInto(op, a, right, right)).to.equal(right);
          expectSameElements(right, expected, `${name} on ${Type.name} into its right operand`);
          const both = a.slice();
          expectSameElements(reduceInto(op, both, both, both), inPieces(op, a, a), `${name} on ${Type.name} of an array with itself`);
        });
      }
    }

    it('reduceInto leaves user reductions and operands of other shapes to reduce()', () => {
      const a = new Float64Array(300).fill(1);
      const b = new Float64Array(300).fill(2);
      const user: ReductionObject<Float64Array> = { reduce: (x, y) => x.map((value, i) => value - (y[i] as number)) };
      const result = reduceInto(user, a, b, a);
      expect(result).to.not.equal(a);
      expect(Array.from(a.subarray(0, 2))).to.deep.equal([1, 1]);
      expect(Array.from(result.subarray(0, 2))).to.deep.equal([-1, -1]);
      // Another type or length: a new result, or reduce's own error.
      const other = new Float32Array(300).fill(3);
      expect(() => reduceInto(Reductions.SUM as ReductionObject<unknown>, a, other, a)).to.throw(TypeError);
      const shorter = new Float64Array(299);
      expect(() => reduceInto(Reductions.SUM as ReductionObject<unknown>, a, shorter, a)).to.throw(RangeError, 'lengths differ');
      expect(Array.from(a.subarray(0, 2))).to.deep.equal([1, 1]);
    });

    it('without the addon (CCJS_NO_NATIVE_REDUCE=1) the JavaScript loops give the same', () => {
      const script = `
        const { Reductions } = await import(${JSON.stringify(new URL('../reduction/index.js', import.meta.url).href)});
        const { reduceNative } = await import(${JSON.stringify(new URL('../reduction/native.js', import.meta.url).href)});
        const a = Float64Array.from({ length: 1000 }, (_, i) => i / 3);
        const b = Float64Array.from({ length: 1000 }, (_, i) => -i * 7);
        console.log(JSON.stringify({ off: reduceNative === undefined, sum: Array.from(Reductions.SUM.reduce(a, b)), max: Array.from(Reductions.MAX.reduce(a, b)) }));`;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, CCJS_NO_NATIVE_REDUCE: '1' }, encoding: 'utf8' });
      expect(child.status, child.stderr).to.equal(0);
      const { off, sum, max } = JSON.parse(child.stdout) as { off: boolean; sum: number[]; max: number[] };
      expect(off, 'the addon is off in the child').to.equal(true);
      const a = Float64Array.from({ length: 1000 }, (_, i) => i / 3);
      const b = Float64Array.from({ length: 1000 }, (_, i) => -i * 7);
      expect(sum).to.deep.equal(Array.from(Reductions.SUM.reduce(a, b)));
      expect(max).to.deep.equal(Array.from(Reductions.MAX.reduce(a, b)));
    });
  });

  describe('MINLOC and MAXLOC', () => {
    const ranked: Located<number>[] = [4, 1, 7, 1, 7].map((value, index) => ({ value, index }));

    it('find the extreme value and where it came from, keeping the lower index on ties', () => {
      expect(foldInRankOrder(ranked, Reductions.MINLOC)).to.deep.equal({ value: 1, index: 1 });
      expect(foldInRankOrder(ranked, Reductions.MAXLOC)).to.deep.equal({ value: 7, index: 2 });
      expect(foldInRankOrder(ranked.slice().reverse(), Reductions.MINLOC)).to.deep.equal({ value: 1, index: 1 });
      expect(foldInRankOrder(ranked.slice().reverse(), Reductions.MAXLOC)).to.deep.equal({ value: 7, index: 2 });
    });

    it('compare bigint values', () => {
      expect(Reductions.MAXLOC.reduce({ value: 2n ** 70n, index: 3 }, { value: 5n, index: 0 })).to.deep.equal({ value: 2n ** 70n, index: 3 });
    });

    it('return a new object of the winning operand class', () => {
      class Sample implements Located<number> {
        constructor(
          readonly value: number,
          readonly index: number,
        ) {}
      }
      const winner = new Sample(-1, 4);
      const result = Reductions.MINLOC.reduce(winner, new Sample(3, 0));
      expect(result).to.not.equal(winner);
      expect(result).to.be.instanceOf(Sample);
      expect(result).to.deep.equal(winner);
    });

    it('reduce arrays of pairs element-wise', () => {
      const first = [
        { value: 3, index: 0 },
        { value: 8, index: 0 },
      ];
      const second = [
        { value: 3, index: 1 },
        { value: 2, index: 1 },
      ];
      expect(Reductions.MINLOC.reduce(second, first)).to.deep.equal([
        { value: 3, index: 0 },
        { value: 2, index: 1 },
      ]);
      expect(Reductions.MAXLOC.reduce(second, first)).to.deep.equal([
        { value: 3, index: 0 },
        { value: 8, index: 0 },
      ]);
    });
  });

  it('never modify their operands', () => {
    const operands: unknown[][] = [
      [Float64Array.of(1.5, -2), Float64Array.of(4, 0.25)],
      [BigInt64Array.of(3n, -4n), BigInt64Array.of(-5n, 6n)],
      [
        [1, [2, Int8Array.of(3)]],
        [4, [5, Int8Array.of(6)]],
      ],
      [
        { value: 1, index: 1 },
        { value: 1, index: 0 },
      ],
    ];
    for (const [a, b] of operands) {
      const [aBefore, bBefore] = structuredClone([a, b]);
      for (const name of REDUCTION_NAMES) {
        try {
          untyped(name).reduce(a, b);
        } catch {
          // Not every built-in applies to every operand; the operands must stay unchanged either way.
        }
      }
      expect(a).to.deep.equal(aBefore);
      expect(b).to.deep.equal(bBefore);
    }
  });

  describe('errors name the operator and what was wrong', () => {
    it('typed arrays of different lengths: RangeError', () => {
      const action = (): unknown => Reductions.SUM.reduce(new Float64Array(3), new Float64Array(4));
      expect(action).to.throw(RangeError, 'Reductions.SUM cannot combine Float64Array(3) with Float64Array(4): lengths differ');
    });

    it('plain arrays of different lengths: RangeError', () => {
      expect(() => Reductions.MAX.reduce([1, 2], [1, 2, 3])).to.throw(RangeError, 'Reductions.MAX cannot combine Array(2) with Array(3)');
    });

    it('different typed-array types: TypeError', () => {
      expect(() => untyped('PROD').reduce(new Int32Array(2), new Float64Array(2))).to.throw(TypeError, 'Reductions.PROD cannot combine Int32Array(2) with Float64Array(2)');
    });

    it('a number and an array, a number and a bigint, strings: TypeError', () => {
      expect(() => untyped('SUM').reduce(1, [1, 2])).to.throw(TypeError, 'Reductions.SUM cannot combine number with Array(2)');
      expect(() => untyped('MIN').reduce(Float32Array.of(1), [1])).to.throw(TypeError, 'Reductions.MIN cannot combine Float32Array(1) with Array(1)');
      expect(() => untyped('SUM').reduce(1, 1n)).to.throw(TypeError, 'Reductions.SUM cannot combine number with bigint');
      expect(() => untyped('LOR').reduce('yes', true)).to.throw(TypeError, 'Reductions.LOR cannot combine string with boolean');
    });

    it('bitwise operators on non-integers: TypeError', () => {
      expect(() => Reductions.BAND.reduce(1.5, 1)).to.throw(TypeError, 'Reductions.BAND needs integers, but got the number 1.5');
      expect(() => untyped('BXOR').reduce(Float64Array.of(1), Float64Array.of(2))).to.throw(
        TypeError,
        'Reductions.BXOR needs integer elements, but Float64Array holds floating-point numbers',
      );
    });

    it('MINLOC and MAXLOC on anything but { value, index } pairs: TypeError', () => {
      expect(() => untyped('MINLOC').reduce(Float64Array.of(1), Float64Array.of(2))).to.throw(TypeError, 'Reductions.MINLOC reduces { value, index } objects or arrays of them, not a Float64Array');
      expect(() => untyped('MAXLOC').reduce({ value: 1, index: 0 }, 3)).to.throw(TypeError, 'Reductions.MAXLOC cannot combine object with number');
      expect(() => untyped('MAXLOC').reduce({ value: 'x', index: 0 }, { value: 'y', index: 1 })).to.throw(TypeError, 'number or bigint values');
    });
  });

  describe('user reductions', () => {
    class Pivot {
      constructor(
        readonly norm: number,
        readonly column: number,
      ) {}
    }

    /** Partial pivoting: the largest norm wins, the lower column on ties. */
    class LargestPivot implements ReductionObject<Pivot> {
      reduce(a: Pivot, b: Pivot): Pivot {
        return b.norm > a.norm || (b.norm === a.norm && b.column < a.column) ? b : a;
      }
    }

    class Concatenation implements ReductionObject<string> {
      readonly commutative = false;
      reduce(a: string, b: string): string {
        return a + b;
      }
    }

    it('a ReductionObject class on a user class', () => {
      const largest = toReductionObject(new LargestPivot(), 'allReduce');
      const pivots = [new Pivot(2, 0), new Pivot(9, 1), new Pivot(4, 2), new Pivot(9, 3)];
      expect(foldInRankOrder(pivots, largest)).to.equal(pivots[1]);
      expect(reductionName(largest)).to.equal('LargestPivot');
    });

    it('a non-commutative one, folded in rank order', () => {
      const concatenation = toReductionObject(new Concatenation(), 'scan');
      expect(concatenation.commutative).to.equal(false);
      expect(foldInRankOrder(['r0', 'r1', 'r2', 'r3'], concatenation)).to.equal('r0r1r2r3');
      expect(reductionName(concatenation)).to.equal('Concatenation');
    });
  });

  describe('toReductionObject', () => {
    it('accepts a plain function as a commutative operation named after it', () => {
      const hypotenuse = (a: number, b: number): number => Math.hypot(a, b);
      const operation = toReductionObject(hypotenuse, 'allReduce');
      expect(operation.reduce(3, 4)).to.equal(5);
      expect(operation.commutative).to.equal(true);
      expect(reductionName(operation)).to.equal('hypotenuse');
      expect(reductionName(toReductionObject<number>((a, b) => a + b, 'reduce'))).to.equal('anonymous function');
    });

    it('returns ReductionObjects as they are', () => {
      expect(toReductionObject(Reductions.SUM, 'reduce')).to.equal(Reductions.SUM);
    });

    it('rejects what is not an operation with a TypeError naming the collective and the value', () => {
      for (const notAnOperation of [42, null, undefined, 'SUM', {}, { reduce: 1 }]) {
        expectTypeErrorNaming(() => toReductionObject(notAnOperation as never, 'allReduce'), 'allReduce', String(notAnOperation), 'neither a ReductionObject');
      }
    });
  });
});
