/** Dividable data: objects that scatter, gather, allGather, allToAll and reduceScatter divide (CCJ 2.3, 3.3). */
export { blockRange, checkDividable, isDividable, type DividableData } from './dividable-data.js';
export { DividableArray, type ArrayConstructorOf, type DividableArrayData, type TypedArray } from './dividable-array.js';
export { DenseMatrix } from './dense-matrix.js';
export { SparseMatrix, type CsrArrays } from './sparse-matrix.js';
