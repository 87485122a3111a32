/**
 * Binary values (typed arrays, Buffer, DataView, ArrayBuffer) as a type code plus raw bytes, so
 * that they travel without per-element encoding and arrive as the same type. Decoding builds the
 * value over the received bytes without copying whenever their alignment allows.
 */
import { SerializationError } from '../errors.js';

/** Every value `typeCodeOf` recognises. */
export type BinaryValue = ArrayBufferView | ArrayBuffer;

interface BinaryType {
  readonly name: string;
  /** Alignment the bytes need for a zero-copy view (1 for byte-oriented types). */
  readonly bytesPerElement: number;
  /** A prototype that identifies the type; subclasses are found through their prototype chain. */
  readonly prototype: object;
  readonly build: (buffer: ArrayBuffer, byteOffset: number, byteLength: number) => BinaryValue;
}

type TypedArrayConstructor =
  | Int8ArrayConstructor
  | Uint8ArrayConstructor
  | Uint8ClampedArrayConstructor
  | Int16ArrayConstructor
  | Uint16ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor;

function typedArrayType(ctor: TypedArrayConstructor): BinaryType {
  const bytesPerElement = ctor.BYTES_PER_ELEMENT;
  return {
    name: ctor.name,
    bytesPerElement,
    prototype: ctor.prototype,
    build: (buffer, byteOffset, byteLength) => new ctor(buffer, byteOffset, byteLength / bytesPerElement),
  };
}

/** The table: a type's code is its index, so the order is part of the wire format. */
const BINARY_TYPES: readonly BinaryType[] = [
  typedArrayType(Int8Array),
  typedArrayType(Uint8Array),
  typedArrayType(Uint8ClampedArray),
  typedArrayType(Int16Array),
  typedArrayType(Uint16Array),
  typedArrayType(Int32Array),
  typedArrayType(Uint32Array),
  typedArrayType(Float32Array),
  typedArrayType(Float64Array),
  typedArrayType(BigInt64Array),
  typedArrayType(BigUint64Array),
  {
    name: 'Buffer',
    bytesPerElement: 1,
    prototype: Buffer.prototype,
    build: (buffer, byteOffset, byteLength) => Buffer.from(buffer, byteOffset, byteLength),
  },
  {
    name: 'DataView',
    bytesPerElement: 1,
    prototype: DataView.prototype,
    build: (buffer, byteOffset, byteLength) => new DataView(buffer, byteOffset, byteLength),
  },
  {
    name: 'ArrayBuffer',
    bytesPerElement: 1,
    prototype: ArrayBuffer.prototype,
    // An ArrayBuffer cannot be a window on another one: zero-copy only when the bytes are all of it.
    build: (buffer, byteOffset, byteLength) =>
      byteOffset === 0 && byteLength === buffer.byteLength ? buffer : buffer.slice(byteOffset, byteOffset + byteLength),
  },
];

/** The wire code of a binary type; codes fit in one byte. */
export type TypeCode = number;

const codeByPrototype = new Map<object, TypeCode>(BINARY_TYPES.map((type, code) => [type.prototype, code]));

/** The type code of a binary value, or undefined when `value` is not one. Subclasses get their base type's code. */
export function typeCodeOf(value: unknown): TypeCode | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
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

/** The bytes of a binary value as a Uint8Array sharing its memory (no copy). */
export function viewBytes(value: BinaryValue): Uint8Array {
  return ArrayBuffer.isView(value) ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : new Uint8Array(value);
}

/** A copy of `bytes` in a fresh ArrayBuffer (unlike Buffer#slice, which returns a view). */
export function copyBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}

/**
 * Rebuilds the value of type `code` over `bytes`: a view on the same memory when `bytes` is
 * suitably aligned, otherwise over an aligned copy.
 */
export function fromBytes(code: TypeCode, bytes: Uint8Array): BinaryValue {
  const type = BINARY_TYPES[code];
  if (type === undefined) throw new SerializationError(`cannot decode binary data of unknown type code ${code}`);
  const { byteLength } = bytes;
  if (byteLength % type.bytesPerElement !== 0) {
    throw new SerializationError(`cannot decode a ${type.name} from ${byteLength} bytes: not a multiple of ${type.bytesPerElement}`);
  }
  // A SharedArrayBuffer would let the value change under the receiver, so shared memory is copied too.
  const aligned = bytes.byteOffset % type.bytesPerElement === 0 && bytes.buffer instanceof ArrayBuffer;
  const source = aligned ? bytes : copyBytes(bytes);
  return type.build(source.buffer as ArrayBuffer, source.byteOffset, byteLength);
}

/** Binary values of at least this many bytes travel out of band unless configured otherwise. */
export const DEFAULT_OUT_OF_BAND_THRESHOLD = 1024;

/** Inline binary data carries a 32-bit length, so anything longer goes out of band regardless. */
const MAX_INLINE_BYTES = 0xffff_ffff;

/** Whether a binary value of `byteLength` bytes travels beside the graph instead of inside it. */
export function travelsOutOfBand(byteLength: number, threshold: number): boolean {
  return byteLength >= threshold || byteLength > MAX_INLINE_BYTES;
}
