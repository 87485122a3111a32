/**
 * The default serializer: MessagePack (@msgpack/msgpack) with extensions for what plain
 * MessagePack loses: binary types (inline or out of band), registered classes, Map, Set, Date,
 * bigint of any size, undefined and -0. Values are sent as trees: shared references arrive as
 * copies and cycles are rejected (the v8 serializer keeps both).
 */
import { Decoder, Encoder, ExtData, type ExtensionCodecType } from '@msgpack/msgpack';
import { SerializationError } from '../base/errors.js';
import {
  classByName,
  encodeOrExplain,
  registeredClassOf,
  resolveSerializerOptions,
  unknownClassError,
  unregisteredClassError,
  isBuiltinObject,
  type ResolvedSerializerOptions,
  type SerializerOptions,
} from './registry.js';
import type { Serializer } from './serializer.js';
import { fromBytes, travelsOutOfBand, typeCodeOf, viewBytes, type BinaryValue, type TypeCode } from '../base/typed-arrays.js';

/** Extension type numbers: part of the wire format. */
const enum Ext {
  Undefined = 0,
  NegativeZero = 1,
  /** Type code, then the bytes. */
  InlineBinary = 2,
  /** Type code, then the index of the out-of-band part (uint32, big-endian). */
  OutOfBandBinary = 3,
  /** Hexadecimal text, '-' first when negative. */
  BigInt = 4,
  /** Milliseconds since the epoch, float64 (NaN for an invalid date). */
  Date = 5,
  /** Nested MessagePack: [key, value, key, value, ...]. */
  Map = 6,
  /** Nested MessagePack: [item, ...]. */
  Set = 7,
  /** Nested MessagePack: [class name, fields]. */
  Instance = 8,
}

/** Objects and arrays nested deeper than this fail (as a cycle soon does); counted afresh inside each extension payload. */
const MAX_DEPTH = 500;
/** Extension payloads (Map, Set, instances) nested in each other deeper than this fail likewise. */
const MAX_NESTING = 100;

const NO_PARTS: readonly Uint8Array[] = [];
const UNDEFINED = new ExtData(Ext.Undefined, new Uint8Array(0));
const NEGATIVE_ZERO = new ExtData(Ext.NegativeZero, new Uint8Array(0));
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * Scratch space of one encode or decode call, reached by the extension functions through
 * @msgpack/msgpack's context parameter. Encoders and decoders are kept and reused: level 0 does
 * the whole value, level n the extension payloads nested n deep.
 */
class CodecState {
  readonly encoders: GraphEncoder[] = [];
  readonly decoders: Array<Decoder<CodecState>> = [];
  /** Extension payload nesting of the current call. */
  nesting = 0;
  /** Out-of-band parts found while encoding. */
  readonly collected: Uint8Array[] = [];
  /** Out-of-band parts handed in for decoding. */
  received: readonly Uint8Array[] = NO_PARTS;

  constructor(readonly options: ResolvedSerializerOptions) {}

  encoderAt(level: number): GraphEncoder {
    return (this.encoders[level] ??= new GraphEncoder(this));
  }

  decoderAt(level: number): Decoder<CodecState> {
    return (this.decoders[level] ??= new Decoder({ extensionCodec: extensions, context: this }));
  }
}

// @msgpack/msgpack writes undefined as nil (it would arrive as null) and -0 as the integer 0, and
// neither reaches the extension codec. Its per-value dispatch is the private method `doEncode`;
// GraphEncoder hands it extension markers for those two values instead.
type EncodeValue = (this: Encoder<CodecState>, value: unknown, depth: number) => void;
const inheritedEncodeValue = (Encoder.prototype as unknown as { doEncode?: EncodeValue }).doEncode;
if (typeof inheritedEncodeValue !== 'function') {
  throw new Error('ccjs: this version of @msgpack/msgpack has no Encoder#doEncode; the msgpack serializer needs ^3.1');
}

class GraphEncoder extends Encoder<CodecState> {
  constructor(state: CodecState) {
    super({ extensionCodec: extensions, context: state, maxDepth: MAX_DEPTH });
  }
}

Object.defineProperty(GraphEncoder.prototype, 'doEncode', {
  value: function encodeValue(this: GraphEncoder, value: unknown, depth: number): void {
    // @msgpack/msgpack's decoder refuses a key named __proto__ (prototype pollution): refuse it
    // here, so the sender fails instead of every receiver.
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__')) {
      throw new SerializationError('an object with an own key named "__proto__", which msgpack receivers refuse (rename the key, or use the v8 serializer)');
    }
    const replaced = value === undefined ? UNDEFINED : value === 0 && 1 / value < 0 ? NEGATIVE_ZERO : value;
    inheritedEncodeValue.call(this, replaced, depth);
  },
});

/**
 * The extension codec: one function each way, because @msgpack/msgpack's ExtensionCodec would try
 * a list of encoders on every object, while here plain objects and arrays leave after one check.
 */
const extensions: ExtensionCodecType<CodecState> = { tryToEncode: encodeExtension, decode: decodeExtension };

/** The extension for `value`, or null to let MessagePack encode it (plain objects and arrays). */
function encodeExtension(value: unknown, state: CodecState): ExtData | null {
  // Functions and symbols return null too: the encoder then throws and the error search names them.
  if (typeof value !== 'object' || value === null) return typeof value === 'bigint' ? encodeBigInt(value) : null;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === Array.prototype || prototype === null) return null;
  if (value instanceof ExtData) return value;
  const registered = registeredClassOf(value);
  if (registered !== undefined) return new ExtData(Ext.Instance, encodeNested(state, [registered.name, registered.fieldsOf(value)]));
  const code = typeCodeOf(value);
  if (code !== undefined) return encodeBinary(value as BinaryValue, code, state);
  if (value instanceof Date) return encodeDate(value);
  if (value instanceof Map) return new ExtData(Ext.Map, encodeNested(state, flattenMap(value)));
  if (value instanceof Set) return new ExtData(Ext.Set, encodeNested(state, [...value]));
  if (state.options.strict && !isBuiltinObject(value)) throw unregisteredClassError(value);
  return null; // an instance of an unregistered class (or an Error, ...), sent as a plain object
}

function decodeExtension(data: Uint8Array, type: number, state: CodecState): unknown {
  switch (type) {
    case Ext.Undefined:
      return undefined;
    case Ext.NegativeZero:
      return -0;
    case Ext.InlineBinary:
      return fromBytes(data[0] as TypeCode, data.subarray(1));
    case Ext.OutOfBandBinary:
      return decodeOutOfBand(data, state);
    case Ext.BigInt:
      return decodeBigInt(data);
    case Ext.Date:
      return new Date(new DataView(data.buffer, data.byteOffset, data.byteLength).getFloat64(0));
    case Ext.Map:
      return unflattenMap(decodeNestedArray(state, data, 'Map'));
    case Ext.Set:
      return new Set(decodeNestedArray(state, data, 'Set'));
    case Ext.Instance:
      return decodeInstance(decodeNestedArray(state, data, 'class instance'));
    default:
      throw new SerializationError(`unknown MessagePack extension type ${type}`);
  }
}

/** Encodes an extension's payload with the encoder of the next level (no allocation once warm). */
function encodeNested(state: CodecState, payload: unknown): Uint8Array {
  const level = state.nesting + 1;
  if (level > MAX_NESTING) throw new RangeError(`Maps, Sets and class instances nested more than ${MAX_NESTING} deep`);
  state.nesting = level;
  // The shared buffer is copied into the enclosing encoder's buffer before this level is used again.
  const bytes = state.encoderAt(level).encodeSharedRef(payload);
  state.nesting = level - 1;
  return bytes;
}

function decodeNestedArray(state: CodecState, data: Uint8Array, what: string): unknown[] {
  const level = state.nesting + 1;
  state.nesting = level;
  const decoded = state.decoderAt(level).decode(data);
  state.nesting = level - 1;
  if (!Array.isArray(decoded)) throw new SerializationError(`corrupt ${what} in a msgpack message`);
  return decoded;
}

function encodeBinary(value: BinaryValue, code: TypeCode, state: CodecState): ExtData {
  const bytes = viewBytes(value);
  if (travelsOutOfBand(bytes.byteLength, state.options.outOfBandThreshold)) {
    const index = state.collected.push(bytes) - 1;
    const data = new Uint8Array(5);
    data[0] = code;
    new DataView(data.buffer).setUint32(1, index);
    return new ExtData(Ext.OutOfBandBinary, data);
  }
  const data = new Uint8Array(1 + bytes.byteLength);
  data[0] = code;
  data.set(bytes, 1);
  return new ExtData(Ext.InlineBinary, data);
}

function decodeOutOfBand(data: Uint8Array, state: CodecState): BinaryValue {
  const index = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(1);
  const part = state.received[index];
  if (part === undefined) {
    throw new SerializationError(`a msgpack message refers to out-of-band part ${index + 1}, but only ${state.received.length} came with it`);
  }
  return fromBytes(data[0] as TypeCode, part);
}

function encodeBigInt(value: bigint): ExtData {
  return new ExtData(Ext.BigInt, textEncoder.encode(value < 0n ? `-${(-value).toString(16)}` : value.toString(16)));
}

function decodeBigInt(data: Uint8Array): bigint {
  const text = textDecoder.decode(data);
  return text.startsWith('-') ? -BigInt(`0x${text.slice(1)}`) : BigInt(`0x${text}`);
}

function encodeDate(value: Date): ExtData {
  const data = new Uint8Array(8);
  new DataView(data.buffer).setFloat64(0, value.getTime());
  return new ExtData(Ext.Date, data);
}

function flattenMap(map: Map<unknown, unknown>): unknown[] {
  const flat: unknown[] = [];
  for (const [key, value] of map) flat.push(key, value);
  return flat;
}

function unflattenMap(flat: unknown[]): Map<unknown, unknown> {
  const map = new Map<unknown, unknown>();
  for (let index = 0; index < flat.length; index += 2) map.set(flat[index], flat[index + 1]);
  return map;
}

function decodeInstance([name, fields]: unknown[]): object {
  const registered = typeof name === 'string' ? classByName(name) : undefined;
  if (registered === undefined) throw unknownClassError(name);
  return registered.instantiate(fields);
}

/**
 * The default serializer: MessagePack with extensions for binary types (inline, or out of band
 * from `outOfBandThreshold` bytes), registered classes, Map, Set, Date, bigint, undefined and -0.
 * Values travel as trees: shared references arrive as separate copies and cycles are a
 * {@link SerializationError}.
 */
export class MsgpackSerializer implements Serializer {
  /** Carried in every message, so that endpoints using different serializers are caught. */
  readonly name = 'msgpack';
  private readonly options: ResolvedSerializerOptions;
  /** The state of the next call; a call made while another runs (from a class hook) gets its own. */
  private spareState: CodecState | undefined;

  /** @throws {@link ConfigError} for a negative `outOfBandThreshold`. */
  constructor(options: SerializerOptions = {}) {
    this.options = resolveSerializerOptions(options);
  }

  /** @inheritDoc Serializer.encode */
  encode(value: unknown): Uint8Array | Uint8Array[] {
    return encodeOrExplain(this.name, value, (part) => this.encodeGraph(part), true);
  }

  /** @inheritDoc Serializer.decode */
  decode(bytes: Uint8Array, outOfBand: readonly Uint8Array[] = NO_PARTS): unknown {
    const state = this.takeState();
    state.received = outOfBand;
    state.nesting = 0;
    try {
      return state.decoderAt(0).decode(bytes);
    } catch (error) {
      if (error instanceof SerializationError) throw error;
      throw new SerializationError(`the msgpack serializer cannot decode a message: ${(error as Error).message}`, '', { cause: error });
    } finally {
      state.received = NO_PARTS;
      this.spareState = state;
    }
  }

  private encodeGraph(value: unknown): Uint8Array | Uint8Array[] {
    const state = this.takeState();
    state.nesting = 0;
    try {
      const graph = state.encoderAt(0).encode(value);
      return state.collected.length === 0 ? graph : [graph, ...state.collected];
    } finally {
      if (state.collected.length > 0) state.collected.length = 0;
      this.spareState = state;
    }
  }

  private takeState(): CodecState {
    const state = this.spareState ?? new CodecState(this.options);
    this.spareState = undefined;
    return state;
  }
}
