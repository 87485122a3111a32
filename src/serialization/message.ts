/**
 * The messaging layer's codec between values and packets. A packet's head says how to read its
 * bodies:
 *   [RAW, type code]               a top-level binary value; its bytes are the one body, with no
 *                                  serializer involved (the common case of numeric arrays)
 *   [SERIALIZED, serializer name]  bodies are the serializer's parts: graph, then out-of-band
 *                                  buffers; the name catches processes configured differently
 * Heads are shared between packets: nothing may write into them.
 */
import type { Packet } from '../../transport/device.js';
import { SerializationError } from '../errors.js';
import type { Serializer } from './serializer.js';
import { fromBytes, typeCodeOf, typeNameOf, viewBytes, type BinaryValue } from './typed-arrays.js';

const enum HeadKind {
  Raw = 1,
  Serialized = 2,
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

const rawHeads: Uint8Array[] = [];
const serializedHeads = new WeakMap<Serializer, Uint8Array>();

function rawHead(code: number): Uint8Array {
  return (rawHeads[code] ??= Uint8Array.of(HeadKind.Raw, code));
}

function serializedHead(serializer: Serializer): Uint8Array {
  let head = serializedHeads.get(serializer);
  if (head === undefined) {
    const name = textEncoder.encode(serializer.name);
    head = new Uint8Array(1 + name.byteLength);
    head[0] = HeadKind.Serialized;
    head.set(name, 1);
    serializedHeads.set(serializer, head);
  }
  return head;
}

/** The packet for `value`; its bodies share memory with binary values inside `value`. */
export function encodeMessage(value: unknown, serializer: Serializer): Packet {
  const code = typeCodeOf(value);
  if (code !== undefined) return { head: rawHead(code), bodies: [viewBytes(value as BinaryValue)] };
  const parts = serializer.encode(value);
  return { head: serializedHead(serializer), bodies: parts instanceof Uint8Array ? [parts] : parts };
}

/** The value `packet` carries. Binary values are built over the bodies' memory where alignment allows. */
export function decodeMessage(packet: Packet, serializer: Serializer): unknown {
  const { head, bodies } = packet;
  const graph = bodies[0];
  if (graph === undefined) throw new SerializationError('cannot decode a message without a body');
  switch (head[0]) {
    case HeadKind.Raw: {
      const code = head[1] as number;
      if (head.byteLength !== 2 || bodies.length !== 1) throw new SerializationError(`corrupt message head for a ${typeNameOf(code)}`);
      return fromBytes(code, graph);
    }
    case HeadKind.Serialized: {
      const expected = serializedHead(serializer);
      if (!sameBytes(head, expected)) {
        const senderName = textDecoder.decode(head.subarray(1));
        throw new SerializationError(
          `a message encoded with the '${senderName}' serializer cannot be decoded with the '${serializer.name}' serializer: configure every process with the same one`,
        );
      }
      return bodies.length === 1 ? serializer.decode(graph) : serializer.decode(graph, bodies.slice(1));
    }
    default:
      throw new SerializationError(`not a ccjs message: unknown head kind ${String(head[0])}`);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let index = 0; index < a.byteLength; index++) if (a[index] !== b[index]) return false;
  return true;
}
