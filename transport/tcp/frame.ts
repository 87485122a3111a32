/**
 * The TCP device's wire format. Every frame starts with a fixed 32-byte little-endian header:
 *
 *   0 u8 magic 0xCC   1 u8 version   2 u8 frame type   3 u8 flags
 *   4 u32 context     8 u32 source rank   12 u32 destination rank   16 i32 tag
 *   20 u32 send id (the sender's request, echoed by ACK and CTS)
 *   24 u64 payload length (bytes that follow this header)
 *
 * EAGER and DATA frames carry a payload: u32 head length, u32 body count, a u64 length per body,
 * the head, then the bodies. Lengths are 64-bit so that one message may exceed 4 GiB in total.
 */
import type { Envelope } from '../device.js';
import { TransportError } from '../../src/errors.js';

export const MAGIC = 0xcc;
export const WIRE_VERSION = 1;
export const HEADER_BYTES = 32;

export enum FrameType {
  /** Hello from the connecting process: source = its process rank, payload = job id (utf-8). */
  Hello = 1,
  /** A whole message, sent without asking (below the eager limit). */
  Eager = 2,
  /** Rendezvous step 1: a large message is ready to send. */
  ReadyToSend = 3,
  /** Rendezvous step 2: the receiver matched it; send the data. */
  ClearToSend = 4,
  /** Rendezvous step 3: the data of a large message. */
  Data = 5,
  /** A synchronous eager message was matched by the receiver. */
  Ack = 6,
  /** The peer is closing on purpose: its connection going away is not a loss. */
  Goodbye = 7,
}

export const FLAG_SYNCHRONOUS = 1;

export interface FrameHeader extends Envelope {
  readonly type: FrameType;
  readonly flags: number;
  readonly sendId: number;
  readonly payloadLength: number;
}

const TWO_TO_32 = 0x1_0000_0000;

export function writeHeader(target: Buffer, offset: number, header: FrameHeader): void {
  target[offset] = MAGIC;
  target[offset + 1] = WIRE_VERSION;
  target[offset + 2] = header.type;
  target[offset + 3] = header.flags;
  target.writeUInt32LE(header.context, offset + 4);
  target.writeUInt32LE(header.source, offset + 8);
  target.writeUInt32LE(header.destination, offset + 12);
  target.writeInt32LE(header.tag, offset + 16);
  target.writeUInt32LE(header.sendId, offset + 20);
  writeUInt64(target, offset + 24, header.payloadLength);
}

export function readHeader(source: Buffer, offset: number): FrameHeader {
  if (source[offset] !== MAGIC) {
    throw new TransportError(`bad frame: magic byte 0x${source[offset].toString(16)} is not 0xcc`);
  }
  if (source[offset + 1] !== WIRE_VERSION) {
    throw new TransportError(
      `peer speaks wire version ${source[offset + 1]}, this process speaks ${WIRE_VERSION}: mixed ccjs versions in one job`,
    );
  }
  return {
    type: source[offset + 2] as FrameType,
    flags: source[offset + 3],
    context: source.readUInt32LE(offset + 4),
    source: source.readUInt32LE(offset + 8),
    destination: source.readUInt32LE(offset + 12),
    tag: source.readInt32LE(offset + 16),
    sendId: source.readUInt32LE(offset + 20),
    payloadLength: readUInt64(source, offset + 24),
  };
}

export function writeUInt64(target: Buffer, offset: number, value: number): void {
  target.writeUInt32LE(value % TWO_TO_32, offset);
  target.writeUInt32LE(Math.floor(value / TWO_TO_32), offset + 4);
}

export function readUInt64(source: Buffer, offset: number): number {
  return source.readUInt32LE(offset) + source.readUInt32LE(offset + 4) * TWO_TO_32;
}
