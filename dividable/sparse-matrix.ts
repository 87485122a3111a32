/**
 * CCJ's SparseMatrix (CCJ 3.3.2) in compressed sparse row (CSR) form, divided into row blocks.
 * CCJ keeps an object per row; here the whole matrix is three typed arrays, so a block travels
 * as raw bytes proportional to its non-zeros.
 */
import { registerClass } from '../src/serialization/index.js';
import { DenseMatrix } from './dense-matrix.js';
import { blockRange, checkIndex, checkMatrixBlock, checkSize, describeType, type DividableData } from './dividable-data.js';

/** A matrix in CSR form. Within each row, column indices strictly increase. */
export interface CsrArrays {
  /** rows + 1 entries: row r's entries are [rowPointers[r], rowPointers[r + 1]); the first is 0. */
  readonly rowPointers: Int32Array;
  /** The column of each stored entry. */
  readonly columnIndices: Int32Array;
  /** The value of each stored entry. */
  readonly values: Float64Array;
}

/** What travels: the shape, where the rows sit in the whole matrix, and the CSR arrays. */
interface SparseMatrixFields extends CsrArrays {
  readonly rows: number;
  readonly cols: number;
  readonly rowOffset: number;
}

/** Storage setElementAt allocated, with room to grow; columnIndices and values are views on it. */
interface GrowableStorage {
  readonly columnIndices: Int32Array;
  readonly values: Float64Array;
}

/**
 * A sparse matrix of doubles in compressed sparse row (CSR) form as {@link DividableData} (CCJ's
 * SparseMatrix): element i of n is row block i; a block travels as raw bytes proportional to its
 * non-zeros.
 */
export class SparseMatrix implements DividableData<SparseMatrix>, CsrArrays {
  /** The number of rows. */
  readonly rows: number;
  /** The number of columns. */
  readonly cols: number;
  /** The global index of this matrix's first row (see DenseMatrix.rowOffset). */
  readonly rowOffset: number;
  // Not readonly: setElementAt replaces them (see there). Treat them as read-only.
  /** rows + 1 entries: row r's entries are [rowPointers[r], rowPointers[r + 1]). */
  rowPointers: Int32Array;
  /** The column of each stored entry, increasing within a row. */
  columnIndices: Int32Array;
  /** The value of each stored entry. */
  values: Float64Array;
  /** Set once setElementAt has copied the arrays into storage of its own. */
  #storage: GrowableStorage | undefined;

  /**
   * A rows × cols matrix over `csr` (used, not copied, and checked: O(rows + non-zeros)), or
   * all zeros without it.
   *
   * @throws {TypeError} or {RangeError} naming what is wrong with `csr` or the sizes.
   */
  constructor(rows: number, cols: number, csr?: CsrArrays, rowOffset = 0) {
    checkSize('SparseMatrix', 'rows', rows);
    checkSize('SparseMatrix', 'cols', cols);
    checkSize('SparseMatrix', 'rowOffset', rowOffset);
    this.rows = rows;
    this.cols = cols;
    this.rowOffset = rowOffset;
    if (csr === undefined) {
      this.rowPointers = new Int32Array(rows + 1);
      this.columnIndices = new Int32Array(0);
      this.values = new Float64Array(0);
    } else {
      checkCsr(rows, cols, csr);
      ({ rowPointers: this.rowPointers, columnIndices: this.columnIndices, values: this.values } = csr);
    }
  }

  /**
   * The CSR form of `dense`; with `dropZeros` false, zeros are stored too.
   *
   * @throws {RangeError} if the rows of an array of rows differ in length.
   */
  static fromDense(dense: DenseMatrix | readonly ArrayLike<number>[], dropZeros = true): SparseMatrix {
    const { rows, cols, data, rowOffset } = dense instanceof DenseMatrix ? dense : DenseMatrix.fromRows(dense);
    const kept = (value: number): boolean => !dropZeros || value !== 0;
    let nonZeros = 0;
    for (const value of data) if (kept(value)) nonZeros++;
    const rowPointers = new Int32Array(rows + 1);
    const columnIndices = new Int32Array(nonZeros);
    const values = new Float64Array(nonZeros);
    let entry = 0;
    for (let row = 0; row < rows; row++) {
      for (let col = 0; col < cols; col++) {
        const value = data[row * cols + col];
        if (!kept(value)) continue;
        columnIndices[entry] = col;
        values[entry++] = value;
      }
      rowPointers[row + 1] = entry;
    }
    return new SparseMatrix(rows, cols, { rowPointers, columnIndices, values }, rowOffset);
  }

  /** @internal Rebuilds a matrix that travelled. */
  static fromCCJS(fields: unknown): SparseMatrix {
    const { rows, cols, rowOffset, ...csr } = fields as SparseMatrixFields;
    return new SparseMatrix(rows, cols, csr, rowOffset);
  }

  /** @internal What travels. */
  toCCJS(): SparseMatrixFields {
    const { rows, cols, rowOffset, rowPointers, columnIndices, values } = this;
    return { rows, cols, rowOffset, rowPointers, columnIndices, values };
  }

  /** The number of stored entries. */
  get nonZeros(): number {
    return this.values.length;
  }

  /** The same matrix, dense (with the same rowOffset). */
  toDense(): DenseMatrix {
    const dense = new DenseMatrix(this.rows, this.cols, undefined, this.rowOffset);
    for (let row = 0; row < this.rows; row++) {
      for (let entry = this.rowStart(row); entry < this.rowStart(row + 1); entry++) {
        dense.data[row * this.cols + this.columnIndices[entry]] = this.values[entry];
      }
    }
    return dense;
  }

  /**
   * Entry (row, col), by binary search in the row.
   *
   * @throws {RangeError} for an index outside the matrix.
   */
  get(row: number, col: number): number {
    checkIndex('row', row, this.rows);
    checkIndex('column', col, this.cols);
    let low = this.rowStart(row);
    let high = this.rowStart(row + 1);
    while (low < high) {
      const middle = (low + high) >>> 1;
      const middleCol = this.columnIndices[middle];
      if (middleCol === col) return this.values[middle];
      if (middleCol < col) low = middle + 1;
      else high = middle;
    }
    return 0;
  }

  /**
   * Row block `index` of `groupSize` (CCJ's Figure 7): its column indices and values are views,
   * its row pointers a rebased copy.
   *
   * @throws {RangeError} unless `groupSize` >= 1 and `index` is in [0, groupSize).
   */
  elementAt(index: number, groupSize: number): SparseMatrix {
    const [start, end] = blockRange(this.rows, index, groupSize);
    const from = this.rowStart(start);
    const to = this.rowStart(end);
    const rowPointers = this.rowPointers.subarray(start, end + 1).map((pointer) => pointer - from);
    const block = { rowPointers, columnIndices: this.columnIndices.subarray(from, to), values: this.values.subarray(from, to) };
    return new SparseMatrix(end - start, this.cols, block, this.rowOffset + start);
  }

  /**
   * Replaces row block `index` with `block`. CSR arrays cannot grow in place, so the entries after
   * the block move: the first call copies the arrays into storage of the matrix's own with room
   * to spare (arrays given to the constructor are never written), later calls move entries within
   * it and reallocate (doubling) only when it is full. Gathering blocks in order into an empty
   * matrix thus costs O(non-zeros + blocks × rows). Afterwards the CSR fields are new arrays
   * (columnIndices and values views on the storage): earlier references to them are stale.
   *
   * @throws {TypeError} unless `block` is a SparseMatrix.
   * @throws {RangeError} unless it has that block's rows and columns.
   */
  setElementAt(index: number, groupSize: number, block: SparseMatrix): void {
    const [start, end] = blockRange(this.rows, index, groupSize);
    checkMatrixBlock(SparseMatrix, index, groupSize, block, end - start, this.cols);
    // A block over this matrix's memory (one of its own elementAt blocks) would be overwritten while it is read.
    const incoming = this.sharesMemoryWith(block) ? block.copy() : block;
    const from = this.rowStart(start);
    const to = this.rowStart(end);
    const shift = incoming.nonZeros - (to - from);
    const newNonZeros = this.nonZeros + shift;
    const storage = this.makeRoom(from, to, incoming.nonZeros);
    storage.columnIndices.set(incoming.columnIndices, from);
    storage.values.set(incoming.values, from);
    this.columnIndices = storage.columnIndices.subarray(0, newNonZeros);
    this.values = storage.values.subarray(0, newNonZeros);
    for (let row = 1; row <= incoming.rows; row++) this.rowPointers[start + row] = from + incoming.rowPointers[row];
    for (let row = end + 1; row <= this.rows; row++) this.rowPointers[row] += shift;
  }

  /** A matrix over copies of the CSR arrays. */
  copy(): SparseMatrix {
    const { rowPointers, columnIndices, values } = this;
    return new SparseMatrix(this.rows, this.cols, { rowPointers: rowPointers.slice(), columnIndices: columnIndices.slice(), values: values.slice() }, this.rowOffset);
  }

  private sharesMemoryWith(other: SparseMatrix): boolean {
    const buffers = new Set([this.rowPointers.buffer, this.columnIndices.buffer, this.values.buffer]);
    return [other.rowPointers, other.columnIndices, other.values].some((array) => buffers.has(array.buffer));
  }

  private rowStart(row: number): number {
    return this.rowPointers[row];
  }

  /**
   * Own storage in which entries [0, from) are in place and entries [to, nonZeros) start at
   * from + length, leaving [from, from + length) for the new block.
   */
  private makeRoom(from: number, to: number, length: number): GrowableStorage {
    const oldNonZeros = this.nonZeros;
    const needed = oldNonZeros - (to - from) + length;
    const current = this.#storage;
    if (current !== undefined && current.values.length >= needed) {
      // copyWithin moves like memmove: overlapping ranges are safe.
      current.columnIndices.copyWithin(from + length, to, oldNonZeros);
      current.values.copyWithin(from + length, to, oldNonZeros);
      return current;
    }
    const capacity = Math.max(needed, 2 * (current?.values.length ?? 0));
    const grown = { columnIndices: new Int32Array(capacity), values: new Float64Array(capacity) };
    for (const [source, target] of [
      [this.columnIndices, grown.columnIndices],
      [this.values, grown.values],
    ] as const) {
      target.set(source.subarray(0, from));
      target.set(source.subarray(to), from + length);
    }
    // The row pointers are rewritten in place from now on, so they must be the matrix's own too.
    if (current === undefined) this.rowPointers = this.rowPointers.slice();
    this.#storage = grown;
    return grown;
  }
}

/** TypeError or RangeError unless `csr` is a valid rows × cols CSR matrix. */
function checkCsr(rows: number, cols: number, csr: CsrArrays): void {
  const { rowPointers, columnIndices, values } = csr;
  for (const [name, array, type] of [
    ['rowPointers', rowPointers, Int32Array],
    ['columnIndices', columnIndices, Int32Array],
    ['values', values, Float64Array],
  ] as const) {
    if (!(array instanceof type)) throw new TypeError(`SparseMatrix: ${name} must be a ${type.name}, got ${describeType(array)}`);
  }
  if (rowPointers.length !== rows + 1) {
    throw new RangeError(`SparseMatrix: rowPointers must have rows + 1 = ${rows + 1} entries, got ${rowPointers.length}`);
  }
  if (columnIndices.length !== values.length) {
    throw new RangeError(`SparseMatrix: columnIndices and values must have the same length, got ${columnIndices.length} and ${values.length}`);
  }
  if (rowPointers[0] !== 0 || rowPointers[rows] !== values.length) {
    throw new RangeError(`SparseMatrix: rowPointers must run from 0 to ${values.length} (the number of values), got ${rowPointers[0]} to ${rowPointers[rows]}`);
  }
  for (let row = 0; row < rows; row++) {
    if (rowPointers[row + 1] < rowPointers[row]) {
      throw new RangeError(`SparseMatrix: rowPointers must not decrease, got ${rowPointers[row + 1]} after ${rowPointers[row]} at row ${row + 1}`);
    }
  }
  // The pointers now lie in [0, values.length], so every entry read below exists.
  for (let row = 0; row < rows; row++) {
    for (let entry = rowPointers[row]; entry < rowPointers[row + 1]; entry++) {
      const col = columnIndices[entry];
      if (col < 0 || col >= cols) throw new RangeError(`SparseMatrix: row ${row} has column index ${col}, outside [0, ${cols})`);
      if (entry > rowPointers[row] && col <= columnIndices[entry - 1]) {
        throw new RangeError(`SparseMatrix: row ${row} must have strictly increasing column indices, got ${col} after ${columnIndices[entry - 1]}`);
      }
    }
  }
}

registerClass(SparseMatrix, 'ccjs.SparseMatrix');
