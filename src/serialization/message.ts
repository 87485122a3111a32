/**
 * The codec between values and message bodies. A message's `format` says how its bodies read:
 *   below 256         a top-level binary value of that type code; its bytes are the one body, with
 *                     no serializer involved (the common case of numeric arrays)
 *   SERIALIZED | id   bodies are a serializer's parts: graph, then out-of-band buffers; the id (a
 *                     hash of the serializer's name) catches processes configured differently
 */
import { SerializationError } from '../base/errors.js';
import { fnv1a } from '../base/hash.js';
import type { Serializer } from './serializer.js';
import { fromBytes, typeCodeOf, typeNameOf, type BinaryValue, isBinaryFormat } from '../base/typed-arrays.js';

const SERIALIZED = 0x8000_0000;

/** A value turned into bodies. */
export interface EncodedMessage {
  readonly format: number;
  readonly bodies: BinaryValue[];
  /** True when nothing else refers to the first body (a serializer's fresh output), so it need not be copied. */
  readonly ownsFirstBody: boolean;
}

const serializerNames = new Map<number, string>();
const formats = new WeakMap<Serializer, number>();

/** The format of messages of the serializer named `name`. */
function formatOfName(name: string): number {
  return (SERIALIZED | (fnv1a(name) >>> 1)) >>> 0;
}

/**
 * The built-in serializers' formats (msgpack, v8). Their decoders copy every binary value they
 * return, so a received body of theirs may lie in memory shared with other buffers (Node's pool).
 */
export const BUILT_IN_FORMATS: ReadonlySet<number> = new Set(['msgpack', 'v8'].map(formatOfName));

/** The format of messages `serializer` encodes. */
export function serializedFormat(serializer: Serializer): number {
  let format = formats.get(serializer);
  if (format === undefined) {
    format = formatOfName(serializer.name);
    formats.set(serializer, format);
    serializerNames.set(format, serializer.name);
  }
  return format;
}

/** The bodies of `value`; a binary value (or its parts inside an object) shares memory with them. */
export function encodeMessage(value: unknown, serializer: Serializer): EncodedMessage {
  const code = typeCodeOf(value);
  if (code !== undefined) return { format: code, bodies: [value as BinaryValue], ownsFirstBody: false };
  const parts = serializer.encode(value);
  return { format: serializedFormat(serializer), bodies: parts instanceof Uint8Array ? [parts] : parts, ownsFirstBody: true };
}

/** The value a message of `format` carries. Binary values are built over the bodies' memory where alignment allows. */
export function decodeMessage(format: number, bodies: readonly BinaryValue[], serializer: Serializer): unknown {
  const first = bodies[0];
  if (first === undefined) throw new SerializationError('cannot decode a message without a body');
  if (isBinaryFormat(format)) {
    if (bodies.length !== 1) throw new SerializationError(`corrupt message: a ${typeNameOf(format)} in ${bodies.length} bodies`);
    return fromBytes(format, first);
  }
  const expected = serializedFormat(serializer);
  if (format !== expected) {
    const sender = serializerNames.get(format);
    throw new SerializationError(
      `a message encoded with ${sender === undefined ? 'another serializer' : `the '${sender}' serializer`} cannot be decoded with the '${serializer.name}' serializer: configure every process with the same one`,
    );
  }
  for (const body of bodies) if (!(body instanceof Uint8Array)) throw new SerializationError('corrupt message: serialized parts must be bytes');
  return bodies.length === 1 ? serializer.decode(first as Uint8Array) : serializer.decode(first as Uint8Array, bodies.slice(1) as Uint8Array[]);
}
