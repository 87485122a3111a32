/**
 * How byte devices (TCP, shared-memory rings) lay a frame out. Every frame starts with a fixed
 * 56-byte little-endian header:
 *
 *   0 u8 magic 0xCC   1 u8 version   2 u8 frame type   3 u8 flags
 *   4 u32 context     8 u32 source rank   12 u32 destination rank   16 u32 tag
 *   20 u32 id (the sender's send id)   24 u32 credit returned   28 u32 body format
 *   32 u32 operation   36 u32 root   40 u32 reduction (the collective signature)
 *   44 u32 body count  48 u64 size (bytes of the message, or what a ReadyToSend announces)
 *
 * Eager and Data frames follow it with a u64 length per body, then the bodies. Lengths are 64-bit
 * so that one message may exceed 4 GiB in total. Device-level frames (a connection's hello) use
 * types above the engine's.
 */
import { Frame, FrameType, NO_BODIES } from './frame.js';
import { TransportError } from '../src/base/errors.js';
import { maxMessageBytes, unreceivable } from './body-memory.js';

export const MAGIC = 0xcc;
export const WIRE_VERSION = 2;
export const HEADER_BYTES = 56;
/** Largest frame type the engine uses; devices number their own frames above it. */
export const LAST_ENGINE_FRAME_TYPE = 7;

const TWO_TO_32 = 0x1_0000_0000;

export function writeHeader(target: Buffer, offset: number, frame: Frame): void {
  target[offset] = MAGIC;
  target[offset + 1] = WIRE_VERSION;
  target[offset + 2] = frame.type;
  target[offset + 3] = frame.flags;
  target.writeUInt32LE(frame.context, offset + 4);
  target.writeUInt32LE(frame.source, offset + 8);
  target.writeUInt32LE(frame.destination, offset + 12);
  target.writeUInt32LE(frame.tag, offset + 16);
  target.writeUInt32LE(frame.id, offset + 20);
  target.writeUInt32LE(frame.credit, offset + 24);
  target.writeUInt32LE(frame.format, offset + 28);
  target.writeUInt32LE(frame.operation, offset + 32);
  target.writeUInt32LE(frame.root, offset + 36);
  target.writeUInt32LE(frame.reduction, offset + 40);
  target.writeUInt32LE(frame.bodies.length, offset + 44);
  writeUInt64(target, offset + 48, frame.size);
}

/** The frame a header describes, with no bodies yet; `bodyCount` is read separately. */
export function readHeader(source: Buffer, offset: number): Frame {
  if (source[offset] !== MAGIC) throw new TransportError(`bad frame: magic byte 0x${(source[offset] ?? 0).toString(16)} is not 0xcc`);
  if (source[offset + 1] !== WIRE_VERSION) {
    throw new TransportError(`peer speaks wire version ${source[offset + 1]}, this endpoint speaks ${WIRE_VERSION}: mixed ccjs versions in one job`);
  }
  return new Frame(
    source[offset + 2] as FrameType,
    source[offset + 3] as number,
    source.readUInt32LE(offset + 4),
    source.readUInt32LE(offset + 8),
    source.readUInt32LE(offset + 12),
    source.readUInt32LE(offset + 16),
    source.readUInt32LE(offset + 32),
    source.readUInt32LE(offset + 36),
    source.readUInt32LE(offset + 40),
    source.readUInt32LE(offset + 28),
    NO_BODIES,
    readUInt64(source, offset + 48),
    source.readUInt32LE(offset + 20),
    source.readUInt32LE(offset + 24),
  );
}

/**
 * The same header through 32-bit words, for memory that both ends share on one host (so byte
 * order is the host's: a little-endian host lays it out exactly as writeHeader does). `index` is
 * the header's byte offset / 4. Five word stores beat sixteen Buffer writes several times over.
 */
export function writeHeaderWords(words: Uint32Array, index: number, frame: Frame): void {
  words[index] = MAGIC | (WIRE_VERSION << 8) | (frame.type << 16) | (frame.flags << 24);
  words[index + 1] = frame.context;
  words[index + 2] = frame.source;
  words[index + 3] = frame.destination;
  words[index + 4] = frame.tag;
  words[index + 5] = frame.id;
  words[index + 6] = frame.credit;
  words[index + 7] = frame.format;
  words[index + 8] = frame.operation;
  words[index + 9] = frame.root;
  words[index + 10] = frame.reduction;
  words[index + 11] = frame.bodies.length;
  words[index + 12] = frame.size % TWO_TO_32;
  words[index + 13] = frame.size / TWO_TO_32;
}

/** readHeader through 32-bit words (see writeHeaderWords). */
export function readHeaderWords(words: Uint32Array, index: number): Frame {
  const first = words[index] as number;
  if ((first & 0xffff) !== (MAGIC | (WIRE_VERSION << 8))) throw new TransportError(`bad frame: header word 0x${first.toString(16)} has no magic byte 0xcc and version ${WIRE_VERSION}`);
  return new Frame(
    ((first >>> 16) & 0xff) as FrameType,
    first >>> 24,
    words[index + 1] as number,
    words[index + 2] as number,
    words[index + 3] as number,
    words[index + 4] as number,
    words[index + 8] as number,
    words[index + 9] as number,
    words[index + 10] as number,
    words[index + 7] as number,
    NO_BODIES,
    (words[index + 12] as number) + (words[index + 13] as number) * TWO_TO_32,
    words[index + 5] as number,
    words[index + 6] as number,
  );
}

/** Most bodies one frame may have (a stranger's count must not make us allocate without bound). */
export const MAX_BODIES = 1 << 16;

/** Throws for a body count that does not fit the frame's type and size. */
export function checkBodyCount(frame: Frame, count: number): void {
  if (frame.type === FrameType.Eager || frame.type === FrameType.Data) {
    if (count > MAX_BODIES) throw new TransportError(`bad frame: ${count} bodies`);
    if (count === 0 && frame.size !== 0) throw new TransportError(`bad frame: no bodies in a message of ${frame.size} bytes`);
    if (frame.size > maxMessageBytes()) throw new TransportError(`bad frame: a message of ${frame.size} bytes, more than this machine's memory (${maxMessageBytes()} bytes) could ever hold`);
  } else if (count !== 0) {
    throw new TransportError(`bad frame: a control frame with ${count} bodies`);
  }
}

/** Throws for body `index` (of `count`, `length` bytes) of a message frame that this endpoint could never hold (see unreceivable). */
export function checkBodyLength(frame: Frame, count: number, index: number, length: number): void {
  const why = unreceivable(frame.format, count, index, length);
  if (why !== undefined) throw new TransportError(`bad frame: ${why}`);
}

export function bodyCountOf(source: Buffer, offset: number): number {
  return source.readUInt32LE(offset + 44);
}

export function writeUInt64(target: Buffer, offset: number, value: number): void {
  target.writeUInt32LE(value % TWO_TO_32, offset);
  target.writeUInt32LE(Math.floor(value / TWO_TO_32), offset + 4);
}

export function readUInt64(source: Buffer, offset: number): number {
  return source.readUInt32LE(offset) + source.readUInt32LE(offset + 4) * TWO_TO_32;
}
