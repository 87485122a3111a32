/**
 * Binary values (typed arrays, Buffer, DataView, ArrayBuffer) as a type code plus raw bytes, so
 * that they travel without per-element encoding and arrive as the same type. Decoding builds the
 * value over the received bytes without copying whenever their alignment allows.
 */
import { constants } from 'node:buffer';
import { SerializationError } from './errors.js';

/** Every value `typeCodeOf` recognises. */
export type BinaryValue = ArrayBufferView | ArrayBuffer;

interface BinaryType {
  readonly name: string;
  /** Alignment the bytes need for a zero-copy view (1 for byte-oriented types). */
  readonly bytesPerElement: number;
  /** A prototype that identifies the type; subclasses are found through their prototype chain. */
  readonly prototype: object;
  readonly build: (buffer: ArrayBuffer, byteOffset: number, byteLength: number) => BinaryValue;
  /** A copy of the same type owning exactly its bytes, made without touching `.buffer` where possible. */
  readonly copy: (value: BinaryValue) => BinaryValue;
}

/**
 * The typed-array types by name, in type-code order: a type's code is its position, so the order
 * is part of the wire format (spec/wire-ids.spec.ts pins it). Every other list of them is made
 * from this one.
 */
export const TYPED_ARRAYS = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;

/** A typed-array type by the name its instances report (a Buffer reports 'Uint8Array'). */
export type TypedArrayName = keyof typeof TYPED_ARRAYS;

type TypedArrayConstructor = (typeof TYPED_ARRAYS)[TypedArrayName];

/** The typed-array types by type code. */
export const TYPED_ARRAY_TYPES: readonly TypedArrayConstructor[] = Object.values(TYPED_ARRAYS);

/** Type codes below this are the typed arrays (Buffer, DataView and ArrayBuffer come after). */
export const TYPED_ARRAY_CODES = TYPED_ARRAY_TYPES.length;

function typedArrayType(ctor: TypedArrayConstructor): BinaryType {
  const bytesPerElement = ctor.BYTES_PER_ELEMENT;
  return {
    name: ctor.name,
    bytesPerElement,
    prototype: ctor.prototype,
    build: (buffer, byteOffset, byteLength) => new ctor(buffer, byteOffset, byteLength / bytesPerElement),
    // Same-type construction is a memcpy; small arrays stay on V8's heap (no ArrayBuffer is made).
    copy: (value) => new ctor(value as InstanceType<TypedArrayConstructor> as never),
  };
}

/** The table: a type's code is its index, so the order is part of the wire format. */
const BINARY_TYPES: readonly BinaryType[] = [
  ...TYPED_ARRAY_TYPES.map(typedArrayType),
  {
    name: 'Buffer',
    bytesPerElement: 1,
    prototype: Buffer.prototype,
    build: (buffer, byteOffset, byteLength) => Buffer.from(buffer, byteOffset, byteLength),
    // Not Buffer.from(value): small Buffers would share Node's pool slab.
    copy: (value) => {
      const source = value as Buffer;
      const copy = Buffer.allocUnsafeSlow(source.byteLength);
      source.copy(copy);
      return copy;
    },
  },
  {
    name: 'DataView',
    bytesPerElement: 1,
    prototype: DataView.prototype,
    build: (buffer, byteOffset, byteLength) => new DataView(buffer, byteOffset, byteLength),
    copy: (value) => {
      const view = value as DataView;
      return new DataView((view.buffer as ArrayBuffer).slice(view.byteOffset, view.byteOffset + view.byteLength));
    },
  },
  {
    name: 'ArrayBuffer',
    bytesPerElement: 1,
    prototype: ArrayBuffer.prototype,
    // An ArrayBuffer cannot be a window on another one: zero-copy only when the bytes are all of it.
    build: (buffer, byteOffset, byteLength) =>
      byteOffset === 0 && byteLength === buffer.byteLength ? buffer : buffer.slice(byteOffset, byteOffset + byteLength),
    copy: (value) => (value as ArrayBuffer).slice(0),
  },
];

/** What a typed array of any of those types offers a copier. */
export type TypedArrayView = ArrayBufferView & { readonly BYTES_PER_ELEMENT: number; set(source: ArrayLike<number> | ArrayLike<bigint>, offset?: number): void; slice(start: number, end: number): TypedArrayView };

/** A typed array of type `code` (< TYPED_ARRAY_CODES) over `byteLength` bytes of `buffer` (shared memory too). */
export function typedArrayOver(code: TypeCode, buffer: ArrayBufferLike, byteOffset: number, byteLength: number): TypedArrayView {
  return (BINARY_TYPES[code] as BinaryType).build(buffer as ArrayBuffer, byteOffset, byteLength) as unknown as TypedArrayView;
}

/** The wire code of a binary type; codes fit in one byte. */
export type TypeCode = number;

/**
 * Whether a message's format is a type code of this table: its one body is that binary value's
 * bytes, with no serializer involved (src/serialization/message.ts gives formats 256 and up to serializers).
 */
export function isBinaryFormat(format: number): format is TypeCode {
  return format < 256;
}

const codeByPrototype = new Map<object, TypeCode>(BINARY_TYPES.map((type, code) => [type.prototype, code]));
/** The same prototypes in code order: a scan of a few pointer comparisons beats a map lookup here. */
const prototypes: readonly object[] = BINARY_TYPES.map((type) => type.prototype);

/** The type code of a binary value, or undefined when `value` is not one. Subclasses get their base type's code. */
export function typeCodeOf(value: unknown): TypeCode | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  // The common case: an instance of one of the types itself.
  const direct = prototypes.indexOf(Object.getPrototypeOf(value) as object);
  if (direct >= 0) return direct;
  if (!ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer)) return undefined;
  for (let prototype: object | null = Object.getPrototypeOf(value); prototype !== null; prototype = Object.getPrototypeOf(prototype)) {
    const code = codeByPrototype.get(prototype);
    if (code !== undefined) return code;
  }
  return undefined;
}

/** The name of the type behind a code, for messages. */
export function typeNameOf(code: TypeCode): string {
  return BINARY_TYPES[code]?.name ?? `unknown binary type ${code}`;
}

/**
 * Most elements a typed array has in this Node (buffer.constants.MAX_LENGTH: 2^32 on Node 20), so
 * also the longest Uint8Array and Buffer. A Float64Array, a DataView or an ArrayBuffer may have
 * more bytes than that: its bytes are then seen through several views (byteWindows).
 */
export const MAX_BYTE_VIEW = constants.MAX_LENGTH;

/** Most bytes a value of binary type `code` can have in this Node (a DataView or ArrayBuffer: as many as memory holds). */
export function maxBinaryBytes(code: TypeCode): number {
  const type = BINARY_TYPES[code];
  if (type === undefined || type.prototype === DataView.prototype || type.prototype === ArrayBuffer.prototype) return Number.MAX_SAFE_INTEGER;
  return MAX_BYTE_VIEW * type.bytesPerElement;
}

/** The bytes of a binary value as a Uint8Array sharing its memory (no copy); at most MAX_BYTE_VIEW of them (else byteWindows). */
export function viewBytes(value: BinaryValue): Uint8Array {
  return ArrayBuffer.isView(value) ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : new Uint8Array(value);
}

/** Bytes [start, start + length) of a binary value as a Uint8Array sharing its memory (`length` at most MAX_BYTE_VIEW). */
export function bytesAt(value: BinaryValue, start: number, length: number): Uint8Array {
  return ArrayBuffer.isView(value) ? new Uint8Array(value.buffer, value.byteOffset + start, length) : new Uint8Array(value, start, length);
}

/** All bytes of a binary value, in order, as views of at most `window` bytes each: one view when it fits. */
export function byteWindows(value: BinaryValue, window = MAX_BYTE_VIEW): Uint8Array[] {
  if (value.byteLength <= window) return [viewBytes(value)];
  const windows: Uint8Array[] = [];
  for (let start = 0; start < value.byteLength; start += window) windows.push(bytesAt(value, start, Math.min(window, value.byteLength - start)));
  return windows;
}

/** Copies all bytes of `source` into `target` from byte `offset` on, whatever their lengths. */
export function copyBinaryInto(target: BinaryValue, offset: number, source: BinaryValue): void {
  let at = offset;
  for (const window of byteWindows(source)) {
    bytesAt(target, at, window.byteLength).set(window);
    at += window.byteLength;
  }
}

/** A copy of `bytes` in a fresh ArrayBuffer (unlike Buffer#slice, which returns a view). */
export function copyBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

/** A copy of a binary value (of type `code`), of the same type and owning exactly its bytes. */
export function copyBinary(code: TypeCode, value: BinaryValue): BinaryValue {
  return (BINARY_TYPES[code] as BinaryType).copy(value);
}

/**
 * A received typed array owns exactly its bytes: a view into a larger receive buffer would show
 * other bytes through `.buffer`, and shared memory could change under the receiver.
 */
function ownsItsBytes(value: BinaryValue): boolean {
  if (value instanceof ArrayBuffer) return true;
  return value.byteOffset === 0 && value.buffer.byteLength === value.byteLength && value.buffer instanceof ArrayBuffer;
}

/**
 * Rebuilds the value of type `code` over `bytes`: the same memory when `bytes` owns exactly its
 * bytes (e.g. a receive buffer of its own), otherwise a copy. `bytes` already of that type and
 * owning its bytes (a copy made in this process) is the value itself; `owned` says so when the
 * caller knows (asking `.buffer` of a small typed array makes V8 move it off its heap: ~0.3 µs).
 */
export function fromBytes(code: TypeCode, bytes: BinaryValue, owned = false): BinaryValue {
  const type = BINARY_TYPES[code];
  if (type === undefined) throw new SerializationError(`cannot decode binary data of unknown type code ${code}`);
  if (Object.getPrototypeOf(bytes) === type.prototype && (owned || ownsItsBytes(bytes))) return bytes;
  const { byteLength } = bytes;
  if (byteLength % type.bytesPerElement !== 0) {
    throw new SerializationError(`cannot decode a ${type.name} from ${byteLength} bytes: not a multiple of ${type.bytesPerElement}`);
  }
  if (byteLength > maxBinaryBytes(code)) throw new SerializationError(`cannot decode a ${type.name} from ${byteLength} bytes: this Node's ${type.name} holds at most ${maxBinaryBytes(code)}`);
  // A body longer than any Uint8Array arrives as an ArrayBuffer of its own.
  if (bytes instanceof ArrayBuffer) return type.build(bytes, 0, byteLength);
  if (!(bytes instanceof Uint8Array)) return fromBytes(code, viewBytes(bytes));
  const source = ownsItsBytes(bytes) ? bytes : copyBytes(bytes);
  return type.build(source.buffer as ArrayBuffer, 0, byteLength);
}

/** Binary values of at least this many bytes travel out of band unless configured otherwise. */
export const DEFAULT_OUT_OF_BAND_THRESHOLD = 1024;

/** Inline binary data carries a 32-bit length, so anything longer goes out of band regardless. */
const MAX_INLINE_BYTES = 0xffff_ffff;

/** Whether a binary value of `byteLength` bytes travels beside the graph instead of inside it. */
export function travelsOutOfBand(byteLength: number, threshold: number): boolean {
  return byteLength >= threshold || byteLength > MAX_INLINE_BYTES;
}

const elementViews: readonly (((buffer: ArrayBuffer, byteOffset: number, length: number) => { set(source: ArrayLike<number> | ArrayLike<bigint>): void }) | undefined)[] = BINARY_TYPES.map((type, code) =>
  code < TYPED_ARRAY_CODES ? (buffer: ArrayBuffer, byteOffset: number, length: number) => type.build(buffer, byteOffset, length * type.bytesPerElement) as unknown as { set(source: ArrayLike<number>): void } : undefined,
);

/**
 * Copies the bytes of a binary value into `target` at `offset`. A small typed array is copied
 * through a view of its own type on the target, which avoids materialising its ArrayBuffer (V8
 * keeps small typed arrays on its heap, and reading `.buffer` moves them off it: ~0.25 µs).
 */
export function writeBinary(target: Uint8Array, offset: number, value: BinaryValue): void {
  if (value instanceof Uint8Array) {
    target.set(value, offset);
    return;
  }
  const code = typeCodeOf(value) as TypeCode;
  const type = BINARY_TYPES[code] as BinaryType;
  const view = elementViews[code];
  const start = target.byteOffset + offset;
  if (view !== undefined && start % type.bytesPerElement === 0) {
    view(target.buffer as ArrayBuffer, start, value.byteLength / type.bytesPerElement).set(value as unknown as ArrayLike<number>);
    return;
  }
  target.set(viewBytes(value), offset);
}
