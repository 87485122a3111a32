/** Messages as a byte device carries them: encoded, every body copied into its own ArrayBuffer, decoded. */
import { decodeMessage, encodeMessage, viewBytes, type Serializer } from '../src/serialization/index.js';
import type { EncodedMessage } from '../src/serialization/message.js';

export interface Carried {
  readonly format: number;
  readonly bodies: Uint8Array[];
}

export function overTheWire(message: EncodedMessage): Carried {
  return { format: message.format, bodies: message.bodies.map((body) => new Uint8Array(viewBytes(body))) };
}

export function decodeCarried(carried: Carried, serializer: Serializer): unknown {
  return decodeMessage(carried.format, carried.bodies, serializer);
}

/** What a member on another endpoint receives. */
export function travel<T>(value: T, serializer: Serializer): T {
  return decodeCarried(overTheWire(encodeMessage(value, serializer)), serializer) as T;
}

/** Bytes of a message's bodies. */
export function messageSize(message: EncodedMessage): number {
  return message.bodies.reduce((total, body) => total + body.byteLength, 0);
}
