/**
 * CCJ's DividableDataObjectInterface (CCJ 2.3): random access to the parts of an object by
 * index, so that scatter, gather, allGather, allToAll and reduceScatter work on any object, not
 * only arrays. Ready implementations: {@link DividableArray}, {@link DenseMatrix},
 * {@link SparseMatrix}.
 */
export interface DividableData<E = unknown> {
  /** Part `index` of `groupSize` parts. May return a view; the transport copies as needed. */
  elementAt(index: number, groupSize: number): E;
  /** Stores part `index` of `groupSize` parts. */
  setElementAt(index: number, groupSize: number, element: E): void;
}

/** True when `value` implements {@link DividableData} (has `elementAt` and `setElementAt` methods). */
export function isDividable(value: unknown): value is DividableData {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as DividableData).elementAt === 'function' &&
    typeof (value as DividableData).setElementAt === 'function'
  );
}

/** TypeError naming the argument unless `value` implements DividableData. */
export function checkDividable(value: unknown, what: string): asserts value is DividableData {
  if (!isDividable(value)) {
    throw new TypeError(`${what} must implement DividableData (elementAt and setElementAt), got ${describeType(value)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// What "part i of n" means, and the argument checks the dividable classes share.

/**
 * Items [start, end) of block `index` of `count` over `length` items: blocks as even as
 * possible, the first `length % count` of them one item larger (docs/API.md, "Dividable data").
 *
 * @throws {RangeError} unless `count` is an integer >= 1 and `index` an integer in [0, count).
 */
export function blockRange(length: number, index: number, count: number): [start: number, end: number] {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`the number of blocks (groupSize) must be an integer >= 1, got ${String(count)}`);
  }
  checkIndex('block index', index, count);
  const smallSize = Math.floor(length / count);
  const largeBlocks = length % count;
  const start = index * smallSize + Math.min(index, largeBlocks);
  return [start, start + smallSize + (index < largeBlocks ? 1 : 0)];
}

/** RangeError unless `value` is an integer in [0, limit); `name` says what it indexes. */
export function checkIndex(name: string, value: number, limit: number): void {
  if (!Number.isInteger(value) || value < 0 || value >= limit) {
    throw new RangeError(`${name} must be an integer in [0, ${limit}), got ${String(value)}`);
  }
}

/** RangeError unless `value` is an integer >= 0 (a row count, a column count, an offset). */
export function checkSize(where: string, name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${where}: ${name} must be an integer >= 0, got ${String(value)}`);
}

/**
 * RangeError unless the block handed to setElementAt has the shape of the block it replaces;
 * shapes are descriptions such as '4 elements' or '3 rows × 5 columns'.
 */
export function checkBlockShape(where: string, index: number, count: number, expected: string, actual: string): void {
  if (actual !== expected) throw new RangeError(`${where}: block ${index} of ${count} must have ${expected}, got ${actual}`);
}

/** The shape the matrix classes share. */
interface Matrix {
  readonly rows: number;
  readonly cols: number;
}

/**
 * For the matrices' setElementAt: TypeError unless `block` is a `type`, RangeError unless it is
 * `rows` × `cols`.
 */
export function checkMatrixBlock<M extends Matrix>(
  type: abstract new (...args: never[]) => M,
  index: number,
  count: number,
  block: unknown,
  rows: number,
  cols: number,
): asserts block is M {
  const where = `${type.name}.setElementAt`;
  if (!(block instanceof type)) throw new TypeError(`${where}: block ${index} must be a ${type.name}, got ${describeType(block)}`);
  checkBlockShape(where, index, count, matrixShape(rows, cols), matrixShape(block.rows, block.cols));
}

function matrixShape(rows: number, cols: number): string {
  return `${amount(rows, 'row')} × ${amount(cols, 'column')}`;
}

/** '1 element', '4 elements'. */
export function amount(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** What `value` is, for messages: its class name, or null, undefined, or its typeof. */
export function describeType(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return typeof value;
  return (value as object).constructor?.name ?? 'object';
}
