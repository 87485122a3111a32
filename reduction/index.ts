export { reductionName, toReductionObject } from './reduction-object.js';
export type { ReductionLike, ReductionObject } from './reduction-object.js';
export { Reductions } from './reductions.js';
export type {
  BuiltinReduction,
  ElementwiseReduction,
  IntegerOperand,
  IntegerTypedArray,
  Located,
  LocatedOperand,
  LogicalOperand,
  LogicalReduction,
  LogicalResult,
  NumericOperand,
  TypedArray,
} from './reductions.js';
export type { TypedArrayName } from '../src/base/typed-arrays.js';
