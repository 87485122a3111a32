/**
 * Single copy: a large frame between endpoints of one host need not pass through a ring twice
 * (copied in by the sender, out by the receiver). For the data of a rendezvous (the receiver
 * matched the message and waits for it), the sender writes a small frame in its place
 * that says where the bodies lie in its memory, and keeps them unchanged; the receiver copies
 * them straight into its own memory with process_vm_readv (native/shm.cc), then counts the frame
 * fetched in the ring's header, which frees the sender's bodies. This is what Open MPI's vader
 * does with CMA. Whether a receiver may read its sender's memory (same user, ptrace rules) is
 * checked once per ring at connect; where it may not, frames go through the ring.
 */
import { Frame } from '../../src/engine/frame.js';
import { TransportError } from '../../src/errors.js';
import { viewBytes } from '../../src/serialization/typed-arrays.js';
import type { ShmNative } from './native.js';

/** A frame whose one body is a table of where its real bodies lie in the sender's memory. */
export const FLAG_BODIES_AT_SENDER = 0x80;
/** The table's own format on the ring: no binary type code (below 256), so it stays bytes. */
const TABLE_FORMAT = 0x100;
/**
 * Frames carrying more than this go by single copy. Below it the ring's pipelined copies cost
 * less than the receiver's system call and the round trip that frees the sender's bodies.
 */
export const SINGLE_COPY_BYTES = 64 * 1024;

/** The frame that goes on the ring in `frame`'s place: its envelope, and the table of its bodies. */
export function byReference(frame: Frame, native: ShmNative): Frame {
  const table = new Uint8Array(native.bodyTable(frame.format, frame.bodies as ArrayBufferView[]));
  const { type, flags, context, source, destination, tag, operation, root, reduction, id, credit } = frame;
  return new Frame(type, flags | FLAG_BODIES_AT_SENDER, context, source, destination, tag, operation, root, reduction, TABLE_FORMAT, [table], table.byteLength, id, credit, true);
}

/** Reads the bodies a by-reference frame describes from process `pid`, and makes it the frame it stands for. */
export function fetchBodies(frame: Frame, pid: number, native: ShmNative): Frame {
  const table = viewBytes(frame.bodies[0] as ArrayBufferView);
  let buffers: ArrayBuffer[];
  try {
    buffers = native.fetch(pid, table);
  } catch (error) {
    throw new TransportError(`cannot read a message's bodies from process ${pid}: ${(error as Error).message}`, { cause: error });
  }
  const bodies = buffers.map((buffer) => new Uint8Array(buffer));
  frame.flags &= ~FLAG_BODIES_AT_SENDER;
  frame.format = new DataView(table.buffer, table.byteOffset, 4).getUint32(0, true);
  frame.bodies = bodies;
  frame.size = bodies.reduce((sum, body) => sum + body.byteLength, 0);
  frame.ownsFirstBody = bodies.length > 0;
  return frame;
}
