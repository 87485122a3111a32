/**
 * A frame as UCX messages, in wire.ts's layout (header, body lengths, bodies). A small frame is
 * copied into one message (the caller may reuse its bodies at once); a large one goes as parts,
 * the header with the lengths, then each body as it is, its own message (UCX moves contiguous
 * data without copying). A received frame is read in place: its bodies are views of the buffers
 * UCX filled, or the receive's own buffer a body was expected in (in a whole message, the header's
 * 56 bytes plus 8 per body keep a single body 8-aligned, so typed arrays are built over it without
 * copying). With the checksum on (option `checksum`), a CRC32C of the frame's bytes follows a
 * whole message, and the header part of one sent as parts (its bodies go as they are).
 */
import type { Frame } from '../frame.js';
import { FrameError, TransportError } from '../../src/base/errors.js';
import { MAX_BYTE_VIEW, viewBytes } from '../../src/base/typed-arrays.js';
import type { BinaryValue } from '../../src/base/typed-arrays.js';
import { carriedBytes, prefixBytes, writePrefix } from '../stream.js';
import { HEADER_BYTES, bodyCountOf, checkBodyCount, checkBodyLength, readHeader, readUInt64 } from '../wire.js';
import { bodyOver } from '../body-memory.js';
import { crc32c, expectSum } from '../crc32c.js';
import type { HeldPart } from './native.js';

/** Bytes of the message that carries `frame`. */
export function messageBytes(frame: Frame): number {
  return prefixBytes(frame) + carriedBytes(frame);
}

/** Bytes of the CRC32C that ends a whole message, or the header part of one in parts, with the checksum on. */
export const CHECKSUM_BYTES = 4;

/** The frame copied into one buffer (and its CRC32C after it, `checksum`). */
export function wholeMessage(frame: Frame, checksum = false): Uint8Array[] {
  const length = messageBytes(frame);
  const message = Buffer.allocUnsafe(length + (checksum ? CHECKSUM_BYTES : 0));
  let at = writePrefix(message, 0, frame);
  for (const body of frame.bodies) {
    message.set(viewBytes(body), at);
    at += body.byteLength;
  }
  if (checksum) message.writeUInt32LE(crc32c(message.subarray(0, length)), length);
  return [message];
}

/** The frame as parts: its header and lengths (and the frame's CRC32C, `checksum`), then its bodies as they are. */
export function messageParts(frame: Frame, checksum = false): Uint8Array[] {
  const length = prefixBytes(frame);
  const prefix = Buffer.allocUnsafe(length + (checksum ? CHECKSUM_BYTES : 0));
  writePrefix(prefix, 0, frame);
  const bodies = frame.bodies.map((body) => {
    // A part is one Uint8Array for the addon: a longer body would need a protocol of pieces.
    if (body.byteLength > MAX_BYTE_VIEW) throw new TransportError(`ucx device: a body of ${body.byteLength} bytes is longer than one UCX part can be here (${MAX_BYTE_VIEW}); send it over shm or tcp (devices option), or in pieces`);
    return viewBytes(body);
  });
  if (checksum) prefix.writeUInt32LE(bodies.reduce((crc, body) => crc32c(body, crc), crc32c(prefix.subarray(0, length))), length);
  return [prefix, ...bodies];
}

/** Refuses a frame whose bytes, `pieces`, do not sum to the CRC32C it came with (`sent`). */
export function checkSum(pieces: readonly Uint8Array[], sent: number): void {
  expectSum(pieces.reduce((sum, piece) => crc32c(piece, sum), 0), sent);
}

/** Bytes of the frame in a whole message (or header part) of `length` bytes that ends with its CRC32C. */
export function lengthBeforeSum(length: number): number {
  if (length < CHECKSUM_BYTES) throw new FrameError('checksum', `bad frame: a message of ${length} bytes without its checksum`);
  return length - CHECKSUM_BYTES;
}

/**
 * The frame that received parts hold (one message: the whole frame), its bodies views of them;
 * TransportError if it is none of ours. A part not received yet (its length) is asked of `receive`
 * once the frame's header is read.
 */
export function readMessage(parts: ArrayBuffer | readonly HeldPart[], receive?: (frame: Frame, length: number) => ArrayBuffer | Uint8Array, checksum = false): Frame {
  const whole = parts instanceof ArrayBuffer;
  const first = whole ? parts : parts[0];
  if (first === undefined) throw new TransportError('bad frame: no parts');
  if (!(first instanceof ArrayBuffer)) throw new TransportError('bad frame: no header');
  const bytes = Buffer.from(first, 0, checksum ? lengthBeforeSum(first.byteLength) : first.byteLength);
  if (bytes.length < HEADER_BYTES) throw new TransportError(`bad frame: a message of ${bytes.length} bytes`);
  const frame = readHeader(bytes, 0);
  const count = bodyCountOf(bytes, 0);
  checkBodyCount(frame, count);
  let position = HEADER_BYTES + 8 * count;
  if (position > bytes.length) throw new TransportError(`bad frame: ${count} bodies in a message of ${bytes.length} bytes`);
  if (!whole && parts.length !== count + 1) throw new TransportError(`bad frame: ${count} bodies in ${parts.length - 1} parts`);
  let carried = 0;
  if (count > 0) {
    const bodies: BinaryValue[] = new Array(count);
    for (let i = 0; i < count; i += 1) {
      const length = readUInt64(bytes, HEADER_BYTES + 8 * i);
      checkBodyLength(frame, count, i, length);
      if (whole) {
        if (length > bytes.length - position) throw new TransportError(`bad frame: a body of ${length} bytes past the message's end`);
        bodies[i] = new Uint8Array(first, position, length);
        position += length;
      } else {
        let part = parts[i + 1] as HeldPart;
        if (typeof part === 'number') {
          if (receive === undefined || part !== length) throw new TransportError(`bad frame: a body of ${length} bytes in a part of ${part}`);
          part = receive(frame, length);
        }
        if (part.byteLength !== length) throw new TransportError(`bad frame: a body of ${length} bytes in a part of ${part.byteLength}`);
        bodies[i] = part instanceof Uint8Array ? part : bodyOver(part);
      }
      carried += length;
    }
    if (carried !== frame.size) throw new FrameError('size', `bad frame: bodies of ${carried} bytes in a message of ${frame.size}`);
    frame.bodies = bodies;
  }
  if (position !== bytes.length) throw new TransportError(`bad frame: ${bytes.length - position} bytes after the frame`);
  if (checksum) checkSum(whole ? [bytes] : [bytes, ...frame.bodies.map(viewBytes)], new DataView(first).getUint32(bytes.length, true));
  return frame;
}
