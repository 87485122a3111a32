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

export class DenseMatrix implements DividableData<DenseMatrix> {
  readonly rows: number;
  readonly cols: number;
  /** Row-major values: entry (r, c) is `data[r * cols + c]`. */
  readonly data: Float64Array;
  /**
   * The global index of this matrix's first row: 0 for a whole matrix, the block's first row for
   * a block from elementAt, so a member knows which rows it holds.
   */
  readonly rowOffset: number;

  /** A rows × cols matrix over `data` (used, not copied), zeros without it. */
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

  /** A matrix with a copy of `rows`, which must all have the same length. */
  static fromRows(rows: readonly ArrayLike<number>[]): DenseMatrix {
    const cols = rows[0]?.length ?? 0;
    const matrix = new DenseMatrix(rows.length, cols);
    rows.forEach((row, index) => {
      if (row.length !== cols) throw new RangeError(`DenseMatrix.fromRows: row ${index} has ${amount(row.length, 'value')}, row 0 has ${cols}`);
      matrix.data.set(row, index * cols);
    });
    return matrix;
  }

  static fromCCJS(fields: unknown): DenseMatrix {
    const { rows, cols, data, rowOffset } = fields as DenseMatrixFields;
    return new DenseMatrix(rows, cols, data, rowOffset);
  }

  toCCJS(): DenseMatrixFields {
    return { rows: this.rows, cols: this.cols, rowOffset: this.rowOffset, data: this.data };
  }

  get(row: number, col: number): number {
    return this.data[this.indexOf(row, col)];
  }

  set(row: number, col: number, value: number): void {
    this.data[this.indexOf(row, col)] = value;
  }

  /** Row `row` as a view: writing into it writes into the matrix. */
  row(row: number): Float64Array {
    checkIndex('row', row, this.rows);
    return this.data.subarray(row * this.cols, (row + 1) * this.cols);
  }

  /** Row block `index` of `groupSize` (rows split by blockRange), over a view of the values. */
  elementAt(index: number, groupSize: number): DenseMatrix {
    const [start, end] = blockRange(this.rows, index, groupSize);
    return new DenseMatrix(end - start, this.cols, this.data.subarray(start * this.cols, end * this.cols), this.rowOffset + start);
  }

  /**
   * Copies the rows of `block` into row block `index`. The index decides where they go, not the
   * block's rowOffset, so blocks built by hand need not set one.
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
