/**
 * A frame as one UCX message, in wire.ts's layout (header, body lengths, bodies). A small frame is
 * copied into one buffer (the caller may reuse its bodies at once); a large one goes as parts, the
 * header and the bodies themselves, gathered by UCX without a copy. A received message is read in
 * place: its bodies are views of the buffer UCX filled (the header's 56 bytes plus 8 per body keep
 * a single body 8-aligned, so typed arrays are built over it without copying).
 */
import type { Frame } from '../../src/engine/frame.js';
import { TransportError } from '../../src/errors.js';
import { viewBytes } from '../../src/serialization/typed-arrays.js';
import type { BinaryValue } from '../../src/serialization/typed-arrays.js';
import { carriedBytes, prefixBytes, writePrefix } from '../stream.js';
import { HEADER_BYTES, bodyCountOf, checkBodyCount, readHeader, readUInt64 } from '../wire.js';

/** Bytes of the message that carries `frame`. */
export function messageBytes(frame: Frame): number {
  return prefixBytes(frame) + carriedBytes(frame);
}

/** The frame copied into one buffer. */
export function wholeMessage(frame: Frame): Uint8Array[] {
  const message = Buffer.allocUnsafe(messageBytes(frame));
  let at = writePrefix(message, 0, frame);
  for (const body of frame.bodies) {
    message.set(viewBytes(body), at);
    at += body.byteLength;
  }
  return [message];
}

/** The frame as parts: its header and lengths, then its bodies as they are. */
export function messageParts(frame: Frame): Uint8Array[] {
  const prefix = Buffer.allocUnsafe(prefixBytes(frame));
  writePrefix(prefix, 0, frame);
  return [prefix, ...frame.bodies.map(viewBytes)];
}

/** The frame a received message holds, its bodies views of `message`; TransportError if it is none of ours. */
export function readMessage(message: ArrayBuffer): Frame {
  const bytes = Buffer.from(message);
  if (bytes.length < HEADER_BYTES) throw new TransportError(`bad frame: a message of ${bytes.length} bytes`);
  const frame = readHeader(bytes, 0);
  const count = bodyCountOf(bytes, 0);
  checkBodyCount(frame, count);
  let position = HEADER_BYTES + 8 * count;
  if (position > bytes.length) throw new TransportError(`bad frame: ${count} bodies in a message of ${bytes.length} bytes`);
  if (count > 0) {
    const bodies: BinaryValue[] = new Array(count);
    for (let i = 0; i < count; i += 1) {
      const length = readUInt64(bytes, HEADER_BYTES + 8 * i);
      if (length > bytes.length - position) throw new TransportError(`bad frame: a body of ${length} bytes past the message's end`);
      bodies[i] = new Uint8Array(message, position, length);
      position += length;
    }
    if (position - HEADER_BYTES - 8 * count !== frame.size) throw new TransportError(`bad frame: bodies of ${position - HEADER_BYTES - 8 * count} bytes in a message of ${frame.size}`);
    frame.bodies = bodies;
  }
  if (position !== bytes.length) throw new TransportError(`bad frame: ${bytes.length - position} bytes after the frame`);
  return frame;
}
