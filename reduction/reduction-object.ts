/**
 * CCJ's function objects for reductions (CCJ 2.3): an associative operation, commutative unless
 * it says `commutative: false`, in which case only algorithms that combine in rank order run.
 */
export interface ReductionObject<T = unknown> {
  /**
   * Combines two operands; must be associative. `a` comes from lower ranks than `b` when the
   * operation is not commutative. May return a new object or one of its arguments, but must not
   * modify them.
   */
  reduce(a: T, b: T): T;
  /** Defaults to true. */
  readonly commutative?: boolean;
  /** Names the operation in traces and in mismatch errors (defaults to the class name). */
  readonly name?: string;
}

/** A {@link ReductionObject}, or a plain function taken as a commutative one. */
export type ReductionLike<T> = ReductionObject<T> | ((a: T, b: T) => T);

/**
 * `op` as a ReductionObject: a plain function becomes a commutative one named after it.
 *
 * @param operation - names the call in the error message.
 * @throws {TypeError} if `op` is neither a function nor an object with a `reduce` method.
 */
export function toReductionObject<T>(op: ReductionLike<T>, operation: string): ReductionObject<T> {
  if (typeof op === 'function') return { reduce: op, commutative: true, name: op.name || 'anonymous function' };
  if (op !== null && typeof op === 'object' && typeof op.reduce === 'function') return op;
  throw new TypeError(`${operation}: ${String(op)} is neither a ReductionObject (an object with reduce(a, b)) nor a function`);
}

/** The name a reduction goes by: its own `name`, else its class name. */
export function reductionName<T>(op: ReductionObject<T>): string {
  if (typeof op.name === 'string' && op.name !== '') return op.name;
  const constructorName = (op as object).constructor?.name;
  return constructorName && constructorName !== 'Object' ? constructorName : 'anonymous reduction';
}
