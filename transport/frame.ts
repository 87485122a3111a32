/**
 * What the engine hands a device and a device hands back: one protocol step of one message, as
 * numbers plus the message's bodies. There is no per-message head buffer: the envelope, the
 * protocol fields, the operation signature and the body format are plain fields, which a byte
 * device writes into its own fixed header (transport/wire.ts) and the in-process device passes as
 * they are.
 */
import { copyBinary, typeCodeOf, isBinaryFormat } from '../src/base/typed-arrays.js';
import type { BinaryValue, TypeCode } from '../src/base/typed-arrays.js';
import { FrameError } from '../src/base/errors.js';

export const enum FrameType {
  /** A whole message, sent without asking (small enough, and the receiver granted the credit). */
  Eager = 1,
  /** Rendezvous step 1: a message of `size` bytes is ready; its data waits at the sender. */
  ReadyToSend = 2,
  /** Rendezvous step 2: the receiver matched it (`id` is the sender's); send the data. */
  ClearToSend = 3,
  /** Rendezvous step 3: the data of a cleared message. */
  Data = 4,
  /** A synchronous eager message (`id`) was matched by its receive. */
  Ack = 5,
  /** Returns flow-control credit (`credit` bytes) when there is no other frame to carry it. */
  Credit = 6,
  /** The peer closes on purpose: the link going away after this is not a loss. */
  Goodbye = 7,
}

/**
 * Who owns which bits of `flags` (one byte on the wire): the engine's flags (below) are
 * EngineFlags, the low four bits; a device may mark frames of its own making with DeviceFlags, the
 * high four (shm's single copy takes 0x80), and clears them before it delivers such a frame.
 * Neither ever sets the other's.
 */
export type EngineFlag = 0x01 | 0x02 | 0x04 | 0x08;
export type DeviceFlag = 0x10 | 0x20 | 0x40 | 0x80;

/** The message belongs to a collective operation: never matched by point-to-point receives. */
export const FLAG_COLLECTIVE: EngineFlag = 1;
/** The sender waits until the receive matched the message (sendSync). */
export const FLAG_SYNCHRONOUS: EngineFlag = 2;
/**
 * A collective call failed at the sender (its body says why): the receiver's part of the same
 * call (context, tag) fails too, and the call's other messages are dropped, so no member waits
 * for data that will never come.
 */
export const FLAG_ABORT: EngineFlag = 4;

export class Frame {
  /** Endpoint rank of the sender, set by the engine when the frame is delivered. */
  peer: number;
  /** Arrival order among unmatched messages, for wildcard receives. */
  stamp: number;

  constructor(
    public type: FrameType,
    public flags: number,
    /** The group's job-wide id. */
    public context: number,
    /** Group ranks of the sending and the receiving member. */
    public source: number,
    public destination: number,
    /** A user tag (point-to-point) or the group's operation counter (collectives). */
    public tag: number,
    /** Collective signature: what the sender called (see src/engine/signature.ts); 0 for point-to-point. */
    public operation: number,
    public root: number,
    public reduction: number,
    /** How the bodies read (src/serialization/message.ts). */
    public format: number,
    /** The message's bodies (Eager and Data frames); empty for control frames. The array is the frame's own: a device may replace bodies in it. */
    public bodies: BinaryValue[],
    /** Total bytes of the message: the bodies, or what a ReadyToSend announces. */
    public size: number,
    /** The sender's send id (echoed by ClearToSend, Data and Ack). */
    public id = 0,
    /** Flow-control credit returned to the receiver of this frame, in bytes. */
    public credit = 0,
    /** True when nothing but this frame refers to the first body (a serializer's fresh output). */
    public ownsFirstBody = false,
  ) {
    // Assigned here rather than as class fields: no initializer call per frame (this is the hot path).
    this.peer = -1;
    this.stamp = 0;
  }
}

/** Rendezvous step 1 for message frame `message` (send id `id`): its envelope, signature, format and size, without its bodies. */
export function readyToSend(message: Frame, id: number): Frame {
  return new Frame(FrameType.ReadyToSend, message.flags, message.context, message.source, message.destination, message.tag, message.operation, message.root, message.reduction, message.format, NO_BODIES, message.size, id);
}

/** Rendezvous step 2: the receiver matched `announcement` (a ReadyToSend); the sender may send the data. */
export function clearToSend(announcement: Frame): Frame {
  return replyTo(FrameType.ClearToSend, announcement);
}

/** Rendezvous step 3: the data of message frame `message`, cleared under send id `id` (the bodies in an array of its own). */
export function rendezvousData(message: Frame, id: number): Frame {
  return new Frame(FrameType.Data, message.flags, message.context, message.source, message.destination, message.tag, message.operation, message.root, message.reduction, message.format, message.bodies.slice(), message.size, id, 0, message.ownsFirstBody);
}

/** The synchronous eager `message` was matched by its receive. */
export function ack(message: Frame): Frame {
  return replyTo(FrameType.Ack, message);
}

/** A frame that carries nothing but the flow-control credit the sender fills in as it sends it. */
export function creditReturn(): Frame {
  return new Frame(FrameType.Credit, 0, 0, 0, 0, 0, 0, 0, 0, 0, NO_BODIES, 0);
}

/** The sender closes on purpose, naming the first endpoint it knew lost, if any (`id`: that endpoint + 1; 0: none). */
export function goodbye(lost: number | undefined): Frame {
  return new Frame(FrameType.Goodbye, 0, 0, 0, 0, 0, 0, 0, 0, 0, NO_BODIES, 0, lost === undefined ? 0 : lost + 1);
}

/** The endpoint a Goodbye names lost, if any. */
export function lostNamedIn(frame: Frame): number | undefined {
  return frame.id > 0 ? frame.id - 1 : undefined;
}

/** A control frame answering `of` from its receiver: the envelope turned back toward its sender, echoing its send id. */
function replyTo(type: FrameType, of: Frame): Frame {
  return new Frame(type, of.flags, of.context, of.destination, of.source, of.tag, 0, 0, 0, 0, NO_BODIES, 0, of.id);
}

/**
 * Whether a message frame's one body is a binary value's bytes (no serializer parts): the only
 * kind of message a receive may take straight into a buffer of its own.
 */
export function carriesOneBinary(frame: Frame): boolean {
  return isBinaryFormat(frame.format) && frame.bodies.length === 1;
}

/** What a device reports of bytes that it could not read as a frame: the FrameError thrown, or the failure as one ('framing'). */
export function asFrameError(error: unknown): FrameError {
  return error instanceof FrameError ? error : new FrameError('framing', error instanceof Error ? error.message : String(error));
}

/** The bodies of frames that carry none (never written to: such frames have no bodies to replace). */
export const NO_BODIES: BinaryValue[] = [];

/** Bytes of every body together (exact up to 2^53). */
export function bodiesSize(bodies: readonly BinaryValue[]): number {
  let total = 0;
  for (let i = 0; i < bodies.length; i += 1) total += bodies[i].byteLength;
  return total;
}

/**
 * Replaces a message frame's bodies with copies that nothing else refers to: a binary value stays
 * of its type (format below 256), serializer parts stay bytes; a first body the frame owns is kept.
 */
export function copyBodies(frame: Frame): void {
  const { bodies } = frame;
  for (let i = frame.ownsFirstBody ? 1 : 0; i < bodies.length; i += 1) bodies[i] = copyBinary(bodyTypeCode(frame, i), bodies[i] as BinaryValue);
  frame.ownsFirstBody = true;
}

/** The binary type of body `index`: a binary value's is the frame's format (it may travel as bytes), a serializer part's its own. */
export function bodyTypeCode(frame: Frame, index: number): TypeCode {
  return index === 0 && isBinaryFormat(frame.format) ? frame.format : (typeCodeOf(frame.bodies[index]) as TypeCode);
}
