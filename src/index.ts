/**
 * ccjs: CCJ-style object-based message passing and collective communication for Node.js.
 *
 * Start with {@link ColGroupMaster} and {@link ColMember}; docs/getting-started.md is the guide,
 * docs/API.md the contract.
 *
 * @packageDocumentation
 */
export { ColGroupMaster } from '../groups/col-group-master.js';
export { world, WorldMember, WORLD_GROUP } from '../groups/world.js';
export type { MasterEvents, GroupFormedEvent } from '../groups/col-group-master.js';
export type { PeerLostEvent, AbortEvent } from './runtime/failure-events.js';
export { ColGroup } from '../groups/col-group.js';
export { InactiveGroup } from '../groups/inactive-group.js';
export { ColMember, ANY_SOURCE, ANY_TAG } from '../groups/col-member.js';
export type { MessageOptions, ReceiveOptions, ReceivedMessage } from '../groups/col-member.js';
export type { ProbeResult } from './engine/calls.js';
export type { MessageCount, MessageCounts } from './engine/engine.js';
export type { WaitCounts } from './engine/progress.js';
export type { MasterOptions, TransportName, SerializerName, TraceListener } from './runtime/config.js';
export type { DeviceChoice, DeviceRules } from './engine/endpoints.js';
export type { DeviceName } from '../transport/device.js';
export type { CollectiveOptions } from './collectives/operations.js';
export type { AlgorithmName } from './collectives/algorithms.js';
export type { CollectiveName } from './collectives/algorithm.js';
export type { SelectionRule, SelectionTable } from './collectives/selection.js';
export type { Serializer } from './serialization/serializer.js';
export type { ClassConstructor, SerializerOptions } from './serialization/registry.js';
export { registerClass } from './serialization/registry.js';
export { MsgpackSerializer } from './serialization/msgpack.js';
export { V8Serializer } from './serialization/v8.js';
export { Reductions, toReductionObject, reductionName } from '../reduction/index.js';
export type {
  ReductionObject,
  ReductionLike,
  BuiltinReduction,
  ElementwiseReduction,
  LogicalReduction,
  LogicalResult,
  NumericOperand,
  IntegerOperand,
  LogicalOperand,
  Located,
  LocatedOperand,
  TypedArray,
  IntegerTypedArray,
} from '../reduction/index.js';
export { DividableArray, DenseMatrix, SparseMatrix, isDividable, blockRange } from '../dividable/index.js';
export type { DividableData, DividableArrayData, ArrayConstructorOf, CsrArrays } from '../dividable/index.js';
export {
  CCJError,
  GroupError,
  TimeoutError,
  PeerLostError,
  SerializationError,
  TransportError,
  ConfigError,
  AbortError,
  CollectiveMismatchError,
  CollectiveAbortedError,
  ReceiveBufferError,
  FrameError,
  BadFrameError,
} from './base/errors.js';
export type { FrameField } from './base/errors.js';
