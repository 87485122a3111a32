/**
 * The built-in reductions (docs/API.md, "Reductions"; MPI's predefined operations): SUM, PROD, MIN, MAX,
 * LAND, LOR, BAND, BOR, BXOR on numbers, bigints, typed arrays and (nested) plain arrays of these,
 * element-wise, and MINLOC/MAXLOC on `{ value, index }` pairs. All are commutative and never
 * modify their operands.
 */
import type { ReductionObject } from './reduction-object.js';
import { NATIVE_MIN_ELEMENTS, NATIVE_OPERATORS, reduceNative } from './native.js';
import type { ReduceNative } from './native.js';
import { TYPED_ARRAYS, type TypedArrayName } from '../src/base/typed-arrays.js';

/** The typed arrays of integers, which BAND, BOR and BXOR combine. */
export type IntegerTypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;
/** Every typed array type (a Buffer is a Uint8Array). */
export type TypedArray = IntegerTypedArray | Float32Array | Float64Array;

/** What SUM, PROD, MIN and MAX combine. */
export type NumericOperand = number | bigint | TypedArray | readonly NumericOperand[];
/** What BAND, BOR and BXOR combine (numbers must hold integers). */
export type IntegerOperand = number | bigint | IntegerTypedArray | readonly IntegerOperand[];
/** What LAND and LOR combine; any mix of booleans, numbers and bigints is taken by truth value. */
export type LogicalOperand = boolean | number | bigint | TypedArray | readonly LogicalOperand[];
/** A MINLOC/MAXLOC operand: a value and where it came from. */
export interface Located<V extends number | bigint = number | bigint> {
  /** What is compared. */
  readonly value: V;
  /** Where it came from (a rank, a row, ...); the lower one wins a tie. */
  readonly index: number;
}
/** What MINLOC and MAXLOC combine: pairs, or (nested) arrays of pairs, element-wise. */
export type LocatedOperand = Located | readonly LocatedOperand[];

/** LAND/LOR give booleans, except in typed arrays, which hold 0/1 of their own type. */
export type LogicalResult<T> = T extends TypedArray ? T : T extends readonly (infer E)[] ? LogicalResult<E>[] : boolean;

/** What every built-in reduction is: named and commutative. */
export interface BuiltinReduction<Domain> extends ReductionObject<Domain> {
  /** `SUM`, `MAXLOC`, ...: named in traces and in mismatch errors. */
  readonly name: string;
  /** Every built-in reduction is commutative. */
  readonly commutative: true;
}

/** Generic in its operand type, so that it serves as a ReductionObject<T> for every T of its domain. */
export interface ElementwiseReduction<Domain> extends BuiltinReduction<Domain> {
  /** Combines `a` and `b` element-wise into a new value of their type. */
  reduce<T extends Domain>(a: T, b: T): T;
}

/** LAND and LOR: operands of any mix of booleans, numbers and bigints, taken by truth value. */
export interface LogicalReduction extends BuiltinReduction<LogicalOperand> {
  /** Combines `a` and `b` element-wise into booleans (typed arrays: 0/1 of their type). */
  reduce<T extends LogicalOperand>(a: T, b: T): LogicalResult<T>;
}

/** The types that an operator's element expression is written for. */
type ElementType = 'number' | 'bigint' | TypedArrayName;

/** What distinguishes one operator; `elementwise` supplies the rest. */
interface ElementOperator {
  readonly name: string;
  /** Combines two operands that are neither arrays nor typed arrays; throws TypeError for others. */
  combineLeaves(a: unknown, b: unknown): unknown;
  /**
   * The JavaScript expression over the elements `x` and `y` that a result of this typed-array type
   * stores; throws TypeError if the operator does not apply to the type.
   */
  typedArrayExpression(type: TypedArrayName): string;
}

type ScalarFunction<S> = (x: S, y: S) => S;
type TypedArrayLoop = (a: TypedArray, b: TypedArray, result: TypedArray) => void;

// TypedArray.prototype[Symbol.toStringTag] is the language's brand check: the type's name for a
// typed array (of any realm or subclass), undefined for everything else, DataView included.
const typedArrayTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype), Symbol.toStringTag)!.get!;

function typedArrayName(value: unknown): TypedArrayName | undefined {
  return typedArrayTag.call(value) as TypedArrayName | undefined;
}

function isArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}

function holdsBigInts(type: ElementType): boolean {
  return type === 'bigint' || type === 'BigInt64Array' || type === 'BigUint64Array';
}

function describeShape(value: unknown): string {
  const type = typedArrayName(value);
  if (type !== undefined) return `${type}(${(value as TypedArray).length})`;
  if (isArray(value)) return `Array(${value.length})`;
  if (value === null) return 'null';
  if (typeof value === 'object') {
    const className = value.constructor?.name;
    return className && className !== 'Object' ? className : 'object';
  }
  return typeof value;
}

function mismatch(name: string, a: unknown, b: unknown): string {
  return `Reductions.${name} cannot combine ${describeShape(a)} with ${describeShape(b)}`;
}

/**
 * Typed-array loops are generated per (operator, typed-array type) so that every loop's element
 * loads, stores and arithmetic see one type and get inlined. One shared loop calling the operator
 * through a closure took 15 ms for SUM of two 1 Mi Float64Arrays once several operators had run,
 * and 70 ms once more than four typed-array types had; these loops take 2-3 ms regardless. The
 * trailing comment keeps the source texts distinct: V8 caches `new Function` by source text, and
 * loops with equal texts would share type feedback again. Only the constant expressions of this
 * module are compiled, never caller data.
 */
function compileLoop(operatorName: string, type: TypedArrayName, expression: string): TypedArrayLoop {
  return new Function(
    'a',
    'b',
    'result',
    `const length = result.length;
    for (let i = 0; i < length; i++) { const x = a[i], y = b[i]; result[i] = ${expression}; }
    // ${operatorName} on ${type}`,
  ) as TypedArrayLoop;
}

/** Scalars use the very expression their typed-array loops use, so the two cannot drift apart. */
function compileScalar<S>(expression: string): ScalarFunction<S> {
  return new Function('x', 'y', `return ${expression};`) as ScalarFunction<S>;
}

/** Combines a and b into `into` when they are typed arrays of its type and length; false when it cannot. */
type InPlaceCombine = (a: unknown, b: unknown, into: unknown) => boolean;

/** The built-in reductions' in-place form, for reduceInto. */
const inPlace = new WeakMap<object, InPlaceCombine>();

/**
 * `op.reduce(a, b)`, written into `into` (which is `a` or `b`) when `op` is a built-in reduction of
 * typed arrays: a collective combining what it received, which it owns, saves allocating (and
 * the kernel zeroing) a result as large. Any other reduction, or operands of another shape, gets
 * `op.reduce(a, b)`, so rank order and the semantics of user reductions are untouched.
 */
export function reduceInto<T>(op: ReductionObject<T>, a: T, b: T, into: T): T {
  const combineInPlace = inPlace.get(op);
  return combineInPlace !== undefined && combineInPlace(a, b, into) ? into : op.reduce(a, b);
}

/**
 * The engine every built-in shares: recursion through plain arrays, typed-array loops, leaves.
 * `R` is the interface the result is typed as (any built-in's; all accept `never` operands).
 */
function elementwise<R extends BuiltinReduction<never>>(operator: ElementOperator): R {
  const loops = new Map<TypedArrayName, TypedArrayLoop>();
  const loopFor = (type: TypedArrayName): TypedArrayLoop => {
    let loop = loops.get(type);
    if (loop === undefined) {
      loop = compileLoop(operator.name, type, operator.typedArrayExpression(type));
      loops.set(type, loop);
    }
    return loop;
  };
  const nativeCode = reduceNative === undefined ? undefined : NATIVE_OPERATORS[operator.name];
  /** result[i] = a[i] OP b[i]: the addon's loop for long arrays, where it has one. */
  const combineElements = (type: TypedArrayName, a: TypedArray, b: TypedArray, result: TypedArray): void => {
    // Asked first in any case: it throws the TypeError of an operator that does not apply to the type.
    const loop = loopFor(type);
    if (nativeCode !== undefined && result.length >= NATIVE_MIN_ELEMENTS) (reduceNative as ReduceNative).combine(nativeCode, a, b, result);
    else loop(a, b, result);
  };
  const combine = (a: unknown, b: unknown): unknown => {
    const aType = typedArrayName(a);
    const bType = typedArrayName(b);
    if (aType !== undefined && aType === bType) {
      const aElements = a as TypedArray;
      const bElements = b as TypedArray;
      if (aElements.length !== bElements.length) throw new RangeError(`${mismatch(operator.name, a, b)}: lengths differ`);
      const result = new TYPED_ARRAYS[aType](aElements.length);
      combineElements(aType, aElements, bElements, result);
      return result;
    }
    if (isArray(a) && isArray(b)) {
      if (a.length !== b.length) throw new RangeError(`${mismatch(operator.name, a, b)}: lengths differ`);
      return Array.from(a, (element, i) => combine(element, b[i]));
    }
    if (aType !== undefined || bType !== undefined || isArray(a) || isArray(b)) throw new TypeError(mismatch(operator.name, a, b));
    return operator.combineLeaves(a, b);
  };
  const reduction: BuiltinReduction<unknown> = { name: operator.name, commutative: true, reduce: combine };
  inPlace.set(reduction, (a, b, into) => {
    const type = typedArrayName(into);
    if (type === undefined || typedArrayName(a) !== type || typedArrayName(b) !== type) return false;
    const length = (into as TypedArray).length;
    if ((a as TypedArray).length !== length || (b as TypedArray).length !== length) return false;
    combineElements(type, a as TypedArray, b as TypedArray, into as TypedArray);
    return true;
  });
  return Object.freeze(reduction) as R;
}

/** SUM, PROD, MIN, MAX: `expression` combines two numbers or two bigints of the given type. */
function arithmetic(name: string, expression: (type: ElementType) => string): ElementwiseReduction<NumericOperand> {
  const onNumbers = compileScalar<number>(expression('number'));
  const onBigInts = compileScalar<bigint>(expression('bigint'));
  return elementwise({
    name,
    typedArrayExpression: expression,
    combineLeaves(a, b) {
      if (typeof a === 'number' && typeof b === 'number') return onNumbers(a, b);
      if (typeof a === 'bigint' && typeof b === 'bigint') return onBigInts(a, b);
      throw new TypeError(mismatch(name, a, b));
    },
  });
}

/** BAND, BOR, BXOR on integers. */
function bitwise(name: string, expression: string): ElementwiseReduction<IntegerOperand> {
  const onBigInts = compileScalar<bigint>(expression);
  return elementwise({
    name,
    typedArrayExpression(type) {
      if (type === 'Float32Array' || type === 'Float64Array') {
        throw new TypeError(`Reductions.${name} needs integer elements, but ${type} holds floating-point numbers`);
      }
      return expression;
    },
    combineLeaves(a, b) {
      if (typeof a === 'bigint' && typeof b === 'bigint') return onBigInts(a, b);
      if (typeof a === 'number' && typeof b === 'number') {
        if (!Number.isInteger(a) || !Number.isInteger(b)) {
          throw new TypeError(`Reductions.${name} needs integers, but got the number ${Number.isInteger(a) ? b : a}`);
        }
        // Through bigints: JavaScript's bitwise operators on numbers cut them to 32 bits.
        return Number(onBigInts(BigInt(a), BigInt(b)));
      }
      throw new TypeError(mismatch(name, a, b));
    },
  });
}

function isTruthValue(value: unknown): value is boolean | number | bigint {
  return typeof value === 'boolean' || typeof value === 'number' || typeof value === 'bigint';
}

/** LAND, LOR: `expression` is truthy when the result is true. */
function logical(name: string, expression: string): LogicalReduction {
  const onTruthValues = compileScalar<unknown>(`Boolean(${expression})`);
  return elementwise({
    name,
    typedArrayExpression: (type) => (holdsBigInts(type) ? `(${expression}) ? 1n : 0n` : `(${expression}) ? 1 : 0`),
    combineLeaves(a, b) {
      if (isTruthValue(a) && isTruthValue(b)) return onTruthValues(a, b);
      throw new TypeError(mismatch(name, a, b));
    },
  });
}

function isLocated(candidate: unknown): candidate is Located {
  if (typeof candidate !== 'object' || candidate === null) return false;
  const { value, index } = candidate as Partial<Located>;
  return (typeof value === 'number' || typeof value === 'bigint') && typeof index === 'number';
}

/** MINLOC, MAXLOC: the pair whose value `precedes` the other's; on a tie, the lower index. */
function location(name: string, precedes: (x: number | bigint, y: number | bigint) => boolean): ElementwiseReduction<LocatedOperand> {
  return elementwise({
    name,
    typedArrayExpression(type) {
      throw new TypeError(`Reductions.${name} reduces { value, index } objects or arrays of them, not a ${type}`);
    },
    combineLeaves(a, b) {
      if (!isLocated(a) || !isLocated(b)) {
        throw new TypeError(`${mismatch(name, a, b)}: it reduces { value, index } objects with number or bigint values`);
      }
      const winner = precedes(a.value, b.value) ? a : precedes(b.value, a.value) ? b : a.index <= b.index ? a : b;
      // A new object of the winner's class: the result must not alias an operand.
      return Object.assign(Object.create(Object.getPrototypeOf(winner) as object | null) as Located, winner);
    },
  });
}

/** Math.min/max for numbers keep NaN and -0 semantics; bigints have no Math functions. */
const smaller = (type: ElementType): string => (holdsBigInts(type) ? 'x < y ? x : y' : 'Math.min(x, y)');
const larger = (type: ElementType): string => (holdsBigInts(type) ? 'x > y ? x : y' : 'Math.max(x, y)');
// A 32-bit product can exceed 2^53, where a double loses the low bits that the stored result keeps.
const product = (type: ElementType): string => (type === 'Int32Array' || type === 'Uint32Array' ? 'Math.imul(x, y)' : 'x * y');

/**
 * The built-in reductions, MPI's predefined operations, for {@link ColMember.reduce},
 * {@link ColMember.allReduce}, {@link ColMember.reduceScatter} and {@link ColMember.scan}. They
 * combine numbers, bigints, typed arrays and (nested) plain arrays of these element-wise, with
 * fast loops for typed arrays; all are commutative and never modify their operands. Operands of
 * different shapes or types are a TypeError naming both.
 */
export const Reductions = Object.freeze({
  /** The sum. */
  SUM: arithmetic('SUM', () => 'x + y'),
  /** The product (in integer typed arrays it wraps around, as the type does). */
  PROD: arithmetic('PROD', product),
  /** The minimum (NaN wins, as with Math.min). */
  MIN: arithmetic('MIN', smaller),
  /** The maximum (NaN wins, as with Math.max). */
  MAX: arithmetic('MAX', larger),
  /** Logical and: booleans, or 0/1 of the array's own type for typed arrays. */
  LAND: logical('LAND', 'x && y'),
  /** Logical or: booleans, or 0/1 of the array's own type for typed arrays. */
  LOR: logical('LOR', 'x || y'),
  /** Bitwise and of integers (numbers must hold integers; floating-point arrays are a TypeError). */
  BAND: bitwise('BAND', 'x & y'),
  /** Bitwise or of integers. */
  BOR: bitwise('BOR', 'x | y'),
  /** Bitwise exclusive or of integers. */
  BXOR: bitwise('BXOR', 'x ^ y'),
  /** The `{ value, index }` pair with the smallest value; on a tie, the lower index. */
  MINLOC: location('MINLOC', (x, y) => x < y),
  /** The `{ value, index }` pair with the largest value; on a tie, the lower index. */
  MAXLOC: location('MAXLOC', (x, y) => x > y),
});
