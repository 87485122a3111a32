import { expect } from 'chai';
import { createSerializer, encodeMessage, type Serializer } from '../src/serialization/index.js';
import { messageSize, travel } from './wire.js';
import { DenseMatrix, DividableArray, SparseMatrix, blockRange, type DividableArrayData, type DividableData } from '../dividable/index.js';

const serializers: Serializer[] = [createSerializer('msgpack'), createSerializer('v8')];

/** Scatter from `source` and gather into `result`, every block crossing the wire. */
function scatterAndGather<E>(source: DividableData<E>, result: DividableData<E>, count: number, serializer: Serializer): E[] {
  const received = Array.from({ length: count }, (_, index) => travel(source.elementAt(index, count), serializer));
  received.forEach((block, index) => result.setElementAt(index, count, block));
  return received;
}

/** Deterministic pseudo-random numbers in [0, 1) (a linear congruential generator). */
function randomSequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** A rows × cols matrix in which about `density` of the entries are non-zero. */
function sparseDense(rows: number, cols: number, density: number, seed: number): DenseMatrix {
  const random = randomSequence(seed);
  return new DenseMatrix(rows, cols, Float64Array.from({ length: rows * cols }, () => (random() < density ? Math.round(random() * 1000) / 8 + 1 : 0)));
}

describe('dividable data', () => {
  describe('blockRange', () => {
    it('splits lengths 0..20 into 1..9 blocks, the first length % count one larger, covering the items in order', () => {
      for (let length = 0; length <= 20; length++) {
        for (let count = 1; count <= 9; count++) {
          const small = Math.floor(length / count);
          let expectedStart = 0;
          for (let index = 0; index < count; index++) {
            const [start, end] = blockRange(length, index, count);
            expect(start, `start of block ${index} of ${count} over ${length}`).to.equal(expectedStart);
            expect(end - start, `size of block ${index} of ${count} over ${length}`).to.equal(index < length % count ? small + 1 : small);
            expectedStart = end;
          }
          expect(expectedStart, `end of the last block of ${count} over ${length}`).to.equal(length);
        }
      }
    });

    it('is the same function as DividableArray.blockRange', () => {
      expect(DividableArray.blockRange).to.equal(blockRange);
    });

    it('throws RangeError for a block index outside [0, count) or a count below 1', () => {
      expect(() => blockRange(10, 3, 3)).to.throw(RangeError, 'block index must be an integer in [0, 3), got 3');
      expect(() => blockRange(10, -1, 3)).to.throw(RangeError, 'got -1');
      expect(() => blockRange(10, 0.5, 3)).to.throw(RangeError, 'got 0.5');
      expect(() => blockRange(10, 0, 0)).to.throw(RangeError, 'must be an integer >= 1, got 0');
      expect(() => blockRange(10, 0, 1.5)).to.throw(RangeError, 'got 1.5');
    });
  });

  describe('DividableArray', () => {
    const length = 23;
    const cases: Array<{ name: string; whole: () => DividableArrayData; empty: () => DividableArray }> = [
      {
        name: 'a plain array',
        whole: () => Array.from({ length }, (_, index) => (index % 3 === 0 ? `item ${index}` : { index, squares: [index * index] })),
        empty: () => DividableArray.ofLength(length, Array),
      },
      { name: 'a Float64Array', whole: () => Float64Array.from({ length }, (_, index) => index / 7), empty: () => DividableArray.ofLength(length, Float64Array) },
      { name: 'an Int32Array', whole: () => Int32Array.from({ length }, (_, index) => index * -1_000_003), empty: () => DividableArray.ofLength(length, Int32Array) },
    ];

    for (const { name, whole, empty } of cases) {
      for (const serializer of serializers) {
        for (const count of [1, 4, 5, 9]) {
          it(`scatters ${name} into ${count} uneven blocks and gathers it back (${serializer.name})`, () => {
            const source = new DividableArray(whole());
            const result = empty();
            const blocks = scatterAndGather(source, result, count, serializer);
            blocks.forEach((block, index) => {
              expect(block.constructor, `block ${index}`).to.equal(source.array.constructor);
              const [start, end] = blockRange(length, index, count);
              expect(block.length).to.equal(end - start);
            });
            expect(result.array).to.deep.equal(source.array);
          });
        }

        it(`arrives as a DividableArray of ${name} (${serializer.name})`, () => {
          const original = new DividableArray(whole());
          const received = travel(original, serializer);
          expect(received).to.be.instanceOf(DividableArray);
          expect(received.array.constructor).to.equal(original.array.constructor);
          expect(received.array).to.deep.equal(original.array);
        });
      }
    }

    it('hands out typed array blocks as views, plain array blocks as copies', () => {
      const typed = new DividableArray(new Float64Array(10));
      const typedBlock = typed.elementAt(1, 3);
      expect(typedBlock.buffer).to.equal(typed.array.buffer);
      typedBlock[0] = 42;
      expect(typed.array[4]).to.equal(42);

      const plain = new DividableArray<number[]>(new Array<number>(10).fill(0));
      const plainBlock = plain.elementAt(1, 3);
      plainBlock[0] = 42;
      expect(plain.array[4]).to.equal(0);
    });

    it('rejects a block of the wrong length with a RangeError naming both lengths', () => {
      const target = DividableArray.ofLength(10, Float64Array);
      expect(() => target.setElementAt(0, 3, new Float64Array(3))).to.throw(
        RangeError,
        'DividableArray.setElementAt: block 0 of 3 must have 4 elements, got 3 elements',
      );
      expect(() => new DividableArray([1, 2, 3]).setElementAt(2, 3, [1, 2])).to.throw(RangeError, 'must have 1 element, got 2 elements');
      expect(() => target.setElementAt(3, 3, new Float64Array(3))).to.throw(RangeError, 'block index must be an integer in [0, 3), got 3');
      expect(() => target.elementAt(0, 0)).to.throw(RangeError, 'must be an integer >= 1, got 0');
    });

    it('rejects what is not an array with a TypeError', () => {
      expect(() => new DividableArray(new DataView(new ArrayBuffer(8)) as unknown as Uint8Array)).to.throw(TypeError, 'got DataView');
      expect(() => DividableArray.ofLength(4, Array).setElementAt(0, 1, 'abcd' as unknown as unknown[])).to.throw(TypeError, 'got string');
    });
  });

  describe('DenseMatrix', () => {
    const original = new DenseMatrix(7, 5, Float64Array.from({ length: 35 }, (_, index) => index * 1.25 - 3));

    for (const serializer of serializers) {
      for (const count of [3, 4]) {
        it(`scatters a 7×5 matrix into ${count} row blocks and gathers it back (${serializer.name})`, () => {
          const result = new DenseMatrix(7, 5);
          const blocks = scatterAndGather(original, result, count, serializer);
          blocks.forEach((block, index) => {
            const [start, end] = blockRange(7, index, count);
            expect(block).to.be.instanceOf(DenseMatrix);
            expect(block.data).to.be.instanceOf(Float64Array);
            expect([block.rows, block.cols, block.rowOffset]).to.deep.equal([end - start, 5, start]);
            expect(block.get(0, 2)).to.equal(original.get(start, 2));
          });
          expect(result.data).to.deep.equal(original.data);
        });
      }
    }

    it('hands out row blocks over views of its values, remembering their first row', () => {
      const block = original.elementAt(1, 3);
      expect(block.data.buffer).to.equal(original.data.buffer);
      expect(block.rowOffset).to.equal(3);
      expect(block.elementAt(1, 2).rowOffset).to.equal(4);
    });

    it('sends only the bytes of a block', () => {
      const large = new DenseMatrix(400, 50);
      for (const serializer of serializers) {
        const blockBytes = messageSize(encodeMessage(large.elementAt(3, 4), serializer));
        expect(blockBytes, serializer.name).to.be.within(100 * 50 * 8, 100 * 50 * 8 + 200);
      }
    });

    it('reads and writes entries and rows', () => {
      const matrix = DenseMatrix.fromRows([
        [1, 2, 3],
        [4, 5, 6],
      ]);
      expect([matrix.rows, matrix.cols, matrix.get(1, 2)]).to.deep.equal([2, 3, 6]);
      matrix.set(0, 1, 20);
      expect(Array.from(matrix.row(0))).to.deep.equal([1, 20, 3]);
      matrix.row(1)[0] = 40;
      expect(matrix.get(1, 0)).to.equal(40);
      expect(() => matrix.get(2, 0)).to.throw(RangeError, 'row must be an integer in [0, 2), got 2');
      expect(() => matrix.set(0, 3, 1)).to.throw(RangeError, 'column must be an integer in [0, 3), got 3');
      expect(() => DenseMatrix.fromRows([[1, 2], [3]])).to.throw(RangeError, 'row 1 has 1 value, row 0 has 2');
      expect(() => new DenseMatrix(2, 3, new Float64Array(5))).to.throw(RangeError, 'rows × cols = 6 values, got 5');
    });

    it('rejects a block of the wrong shape with a RangeError naming both shapes', () => {
      const result = new DenseMatrix(7, 5);
      expect(() => result.setElementAt(0, 3, new DenseMatrix(2, 5))).to.throw(
        RangeError,
        'DenseMatrix.setElementAt: block 0 of 3 must have 3 rows × 5 columns, got 2 rows × 5 columns',
      );
      expect(() => result.setElementAt(2, 3, new DenseMatrix(2, 4))).to.throw(RangeError, 'must have 2 rows × 5 columns, got 2 rows × 4 columns');
      expect(() => result.setElementAt(0, 3, new Float64Array(15) as unknown as DenseMatrix)).to.throw(TypeError, 'must be a DenseMatrix, got Float64Array');
    });
  });

  describe('SparseMatrix', () => {
    const dense = sparseDense(11, 6, 0.3, 7);
    const original = SparseMatrix.fromDense(dense);

    it('stores only the non-zeros of a dense matrix', () => {
      const nonZeros = dense.data.filter((value) => value !== 0).length;
      expect(nonZeros).to.be.within(10, 30);
      expect(original.nonZeros).to.equal(nonZeros);
      expect(original.toDense().data).to.deep.equal(dense.data);
      for (let row = 0; row < 11; row++) for (let col = 0; col < 6; col++) expect(original.get(row, col)).to.equal(dense.get(row, col));
      expect(SparseMatrix.fromDense(dense, false).nonZeros).to.equal(66);
      expect(SparseMatrix.fromDense([[0, 2], [3, 0]]).nonZeros).to.equal(2);
    });

    for (const serializer of serializers) {
      it(`scatters an 11×6 matrix into 4 row blocks and gathers it back (${serializer.name})`, () => {
        const result = new SparseMatrix(11, 6);
        const blocks = scatterAndGather(original, result, 4, serializer);
        blocks.forEach((block, index) => {
          const [start, end] = blockRange(11, index, 4);
          expect(block).to.be.instanceOf(SparseMatrix);
          expect([block.rows, block.cols, block.rowOffset]).to.deep.equal([end - start, 6, start]);
          expect(block.toDense().data).to.deep.equal(dense.data.subarray(start * 6, end * 6));
        });
        expect(result.toDense().data).to.deep.equal(dense.data);
        expect(Array.from(result.rowPointers)).to.deep.equal(Array.from(original.rowPointers));
        expect(Array.from(result.columnIndices)).to.deep.equal(Array.from(original.columnIndices));
        expect(Array.from(result.values)).to.deep.equal(Array.from(original.values));
      });

      it(`arrives as a SparseMatrix with its CSR arrays (${serializer.name})`, () => {
        const received = travel(original, serializer);
        expect(received).to.be.instanceOf(SparseMatrix);
        expect(received.rowPointers).to.be.instanceOf(Int32Array);
        expect(received.columnIndices).to.be.instanceOf(Int32Array);
        expect(received.values).to.be.instanceOf(Float64Array);
        expect(received.toDense().data).to.deep.equal(dense.data);
      });
    }

    it('places blocks in any order, over blocks already there, without writing into arrays it was given', () => {
      const given = SparseMatrix.fromDense(sparseDense(11, 6, 0.5, 3));
      const givenArrays = [given.rowPointers, given.columnIndices, given.values];
      const givenContents = givenArrays.map((array) => array.slice());
      for (const index of [3, 0, 2, 1, 0]) given.setElementAt(index, 4, original.elementAt(index, 4));
      expect(given.toDense().data).to.deep.equal(dense.data);
      const replaced = sparseDense(11, 6, 0.9, 5);
      given.setElementAt(1, 2, SparseMatrix.fromDense(replaced).elementAt(1, 2));
      const [start] = blockRange(11, 1, 2);
      expect(given.toDense().data.subarray(0, start * 6)).to.deep.equal(dense.data.subarray(0, start * 6));
      expect(given.toDense().data.subarray(start * 6)).to.deep.equal(replaced.data.subarray(start * 6));
      expect(givenArrays).to.deep.equal(givenContents);
    });

    it('places one of its own blocks over another', () => {
      const rows = Array.from({ length: 4 }, (_, row) => Array.from({ length: 3 }, (_, col) => (col <= row ? row + 1 : 0)));
      const matrix = SparseMatrix.fromDense(rows);
      matrix.setElementAt(2, 4, matrix.elementAt(0, 4));
      matrix.setElementAt(0, 2, matrix.elementAt(1, 2));
      expect(Array.from(matrix.toDense().data)).to.deep.equal([1, 0, 0, 4, 4, 4, 1, 0, 0, 4, 4, 4]);
    });

    it('sends a block in bytes proportional to its non-zeros, not rows × cols', () => {
      const large = SparseMatrix.fromDense(sparseDense(200, 500, 0.01, 11));
      const block = large.elementAt(0, 4);
      expect(block.nonZeros).to.be.within(150, 350);
      const csrBytes = block.nonZeros * (8 + 4) + (block.rows + 1) * 4;
      for (const serializer of serializers) {
        const wireBytes = messageSize(encodeMessage(block, serializer));
        expect(wireBytes, serializer.name).to.be.within(csrBytes, csrBytes + 300);
      }
      expect(block.rows * block.cols * 8).to.be.above(40 * csrBytes);
    });

    it('rejects a block with the wrong number of rows with a RangeError naming both shapes', () => {
      const result = new SparseMatrix(11, 6);
      expect(() => result.setElementAt(0, 4, original.elementAt(3, 4))).to.throw(
        RangeError,
        'SparseMatrix.setElementAt: block 0 of 4 must have 3 rows × 6 columns, got 2 rows × 6 columns',
      );
      expect(() => result.setElementAt(0, 4, original.toDense().elementAt(0, 4) as unknown as SparseMatrix)).to.throw(TypeError, 'must be a SparseMatrix, got DenseMatrix');
      expect(() => result.elementAt(4, 4)).to.throw(RangeError, 'block index must be an integer in [0, 4), got 4');
    });

    it('rejects CSR arrays that do not describe a matrix', () => {
      const csr = (rowPointers: number[], columnIndices: number[]) => ({
        rowPointers: Int32Array.from(rowPointers),
        columnIndices: Int32Array.from(columnIndices),
        values: new Float64Array(columnIndices.length).fill(1),
      });
      expect(() => new SparseMatrix(2, 3, csr([0, 1], [0]))).to.throw(RangeError, 'rows + 1 = 3 entries, got 2');
      expect(() => new SparseMatrix(2, 3, csr([0, 1, 1], [0, 1]))).to.throw(RangeError, 'from 0 to 2');
      expect(() => new SparseMatrix(2, 3, csr([0, 2, 1], [0]))).to.throw(RangeError, 'must not decrease');
      expect(() => new SparseMatrix(2, 3, csr([0, 1, 2], [0, 3]))).to.throw(RangeError, 'column index 3, outside [0, 3)');
      expect(() => new SparseMatrix(2, 3, csr([0, 2, 2], [1, 1]))).to.throw(RangeError, 'strictly increasing column indices, got 1 after 1');
      expect(() => new SparseMatrix(1, 3, { ...csr([0, 1], [0]), values: [1] as unknown as Float64Array })).to.throw(TypeError, 'values must be a Float64Array, got Array');
    });
  });
});
