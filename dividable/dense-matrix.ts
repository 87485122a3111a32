/**
 * CCJ's DenseMatrix (CCJ 3.3.1), divided into row blocks. Unlike CCJ's double[][], the values
 * are one row-major Float64Array, so a block is a view and travels as raw bytes.
 */
import { registerClass } from '../src/serialization/index.js';
import { amount, blockRange, checkIndex, checkMatrixBlock, checkSize, describeType, type DividableData } from './dividable-data.js';

/** What travels: the shape, where the rows sit in the whole matrix, and the values. */
interface DenseMatrixFields {
  readonly rows: number;
  readonly cols: number;
  readonly rowOffset: number;
  readonly data: Float64Array;
}

/**
 * A dense matrix of doubles as {@link DividableData} (CCJ's DenseMatrix): element i of n is row
 * block i (rows split as by {@link blockRange}), a view of the values that travels as raw bytes.
 */
export class DenseMatrix implements DividableData<DenseMatrix> {
  /** The number of rows. */
  readonly rows: number;
  /** The number of columns. */
  readonly cols: number;
  /** Row-major values: entry (r, c) is `data[r * cols + c]`. */
  readonly data: Float64Array;
  /**
   * The global index of this matrix's first row: 0 for a whole matrix, the block's first row for
   * a block from elementAt, so a member knows which rows it holds.
   */
  readonly rowOffset: number;

  /**
   * A rows × cols matrix over `data` (used, not copied), zeros without it.
   *
   * @throws {TypeError} if `data` is not a Float64Array.
   * @throws {RangeError} for a negative or non-integer size, or `data` of another length than rows × cols.
   */
  constructor(rows: number, cols: number, data?: Float64Array, rowOffset = 0) {
    checkSize('DenseMatrix', 'rows', rows);
    checkSize('DenseMatrix', 'cols', cols);
    checkSize('DenseMatrix', 'rowOffset', rowOffset);
    if (data !== undefined && !(data instanceof Float64Array)) {
      throw new TypeError(`DenseMatrix: data must be a Float64Array, got ${describeType(data)}`);
    }
    if (data !== undefined && data.length !== rows * cols) {
      throw new RangeError(`DenseMatrix: data must hold rows × cols = ${rows * cols} values, got ${data.length}`);
    }
    this.rows = rows;
    this.cols = cols;
    this.data = data ?? new Float64Array(rows * cols);
    this.rowOffset = rowOffset;
  }

  /**
   * A matrix with a copy of `rows`.
   *
   * @throws {RangeError} unless all rows have the same length.
   */
  static fromRows(rows: readonly ArrayLike<number>[]): DenseMatrix {
    const cols = rows[0]?.length ?? 0;
    const matrix = new DenseMatrix(rows.length, cols);
    rows.forEach((row, index) => {
      if (row.length !== cols) throw new RangeError(`DenseMatrix.fromRows: row ${index} has ${amount(row.length, 'value')}, row 0 has ${cols}`);
      matrix.data.set(row, index * cols);
    });
    return matrix;
  }

  /** @internal Rebuilds a matrix that travelled. */
  static fromCCJS(fields: unknown): DenseMatrix {
    const { rows, cols, data, rowOffset } = fields as DenseMatrixFields;
    return new DenseMatrix(rows, cols, data, rowOffset);
  }

  /** @internal What travels. */
  toCCJS(): DenseMatrixFields {
    return { rows: this.rows, cols: this.cols, rowOffset: this.rowOffset, data: this.data };
  }

  /**
   * Entry (row, col).
   *
   * @throws {RangeError} for an index outside the matrix.
   */
  get(row: number, col: number): number {
    return this.data[this.indexOf(row, col)];
  }

  /**
   * Sets entry (row, col).
   *
   * @throws {RangeError} for an index outside the matrix.
   */
  set(row: number, col: number, value: number): void {
    this.data[this.indexOf(row, col)] = value;
  }

  /**
   * Row `row` as a view: writing into it writes into the matrix.
   *
   * @throws {RangeError} for a row outside the matrix.
   */
  row(row: number): Float64Array {
    checkIndex('row', row, this.rows);
    return this.data.subarray(row * this.cols, (row + 1) * this.cols);
  }

  /**
   * Row block `index` of `groupSize` (rows split by blockRange), over a view of the values.
   *
   * @throws {RangeError} unless `groupSize` >= 1 and `index` is in [0, groupSize).
   */
  elementAt(index: number, groupSize: number): DenseMatrix {
    const [start, end] = blockRange(this.rows, index, groupSize);
    return new DenseMatrix(end - start, this.cols, this.data.subarray(start * this.cols, end * this.cols), this.rowOffset + start);
  }

  /**
   * Copies the rows of `block` into row block `index`. The index decides where they go, not the
   * block's rowOffset, so blocks built by hand need not set one.
   *
   * @throws {TypeError} unless `block` is a DenseMatrix.
   * @throws {RangeError} unless it has that block's rows and columns.
   */
  setElementAt(index: number, groupSize: number, block: DenseMatrix): void {
    const [start, end] = blockRange(this.rows, index, groupSize);
    checkMatrixBlock(DenseMatrix, index, groupSize, block, end - start, this.cols);
    this.data.set(block.data, start * this.cols);
  }

  private indexOf(row: number, col: number): number {
    checkIndex('row', row, this.rows);
    checkIndex('column', col, this.cols);
    return row * this.cols + col;
  }
}

registerClass(DenseMatrix, 'ccjs.DenseMatrix');
