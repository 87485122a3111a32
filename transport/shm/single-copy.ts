/**
 * Single copy: a large frame between endpoints of one host need not pass through a ring twice
 * (copied in by the sender, out by the receiver). For the data of a rendezvous (the receiver
 * matched the message and waits for it), the sender writes a small frame in its place
 * that says where the bodies lie in its memory, and keeps them unchanged; the receiver copies
 * them straight into its own memory with process_vm_readv (native/shm.cc), then counts the frame
 * fetched in the ring's header, which frees the sender's bodies. This is what Open MPI's vader
 * does with CMA; between threads of one process the addon copies with memcpy. Whether a receiver
 * may read its sender's memory (same user, ptrace rules) is checked once per ring at connect;
 * where it may not, frames go through the ring.
 *
 * A large body is copied by both ends at once when the sender is polling anyway (it waits for the
 * release, or for its next message): the receiver offers a copy job in the ring's header (where
 * the body lies, where it goes, in chunks), and each end claims chunks in turn, the receiver
 * reading them, the sender writing them (process_vm_writev). One core alone copies at a fraction
 * of what two do here. A sender that does not poll, or may not write, leaves every chunk to the
 * receiver; the job's chunk counter carries the job's sequence number, so a sender that looks late
 * can never claim a chunk of the next job.
 */
import { Frame } from '../frame.js';
import type { DeviceFlag } from '../frame.js';
import { TransportError } from '../../src/base/errors.js';
import { viewBytes } from '../../src/base/typed-arrays.js';
import type { BinaryValue } from '../../src/base/typed-arrays.js';
import type { Releasable } from '../device.js';
import { bodyOver } from '../body-memory.js';
import type { ShmNative } from './native.js';
import { loadNumber, storeNumber } from './ring.js';

/** A frame whose one body is a table of where its real bodies lie in the sender's memory. */
export const FLAG_BODIES_AT_SENDER: DeviceFlag = 0x80;
/** The table's own format on the ring: no binary type code (below 256), so it stays bytes. */
const TABLE_FORMAT = 0x100;
/**
 * Frames carrying more than this go by single copy. Below it the ring's pipelined copies cost
 * less than the receiver's system call and the round trip that frees the sender's bodies.
 */
export const SINGLE_COPY_BYTES = 64 * 1024;

/** Bodies a peer reads from this sender's memory: kept unchanged until it counts their frame fetched. */
export interface LentBodies {
  readonly releasable: Releasable;
  readonly bodies: readonly BinaryValue[];
  /** Where they lie (bodyTable's layout). */
  readonly table: Uint8Array;
}

/** The frame that goes on the ring in `frame`'s place (its envelope, and the table of its bodies), and what the sender lends. */
export function byReference(frame: Frame, releasable: Releasable, native: ShmNative): { stand: Frame; lent: LentBodies } {
  const table = new Uint8Array(native.bodyTable(frame.format, frame.bodies));
  const { type, flags, context, source, destination, tag, operation, root, reduction, id, credit } = frame;
  const stand = new Frame(type, flags | FLAG_BODIES_AT_SENDER, context, source, destination, tag, operation, root, reduction, TABLE_FORMAT, [table], table.byteLength, id, credit, true);
  return { stand, lent: { releasable, bodies: frame.bodies, table } };
}

const TABLE_HEAD = 8;
const TABLE_ENTRY = 16;
const TWO_TO_32 = 0x1_0000_0000;

function tableWords(table: Uint8Array): DataView {
  return new DataView(table.buffer, table.byteOffset, table.byteLength);
}

function tableFormat(table: Uint8Array): number {
  return table.byteLength >= TABLE_HEAD ? tableWords(table).getUint32(0, true) : 0;
}

function tableCount(table: Uint8Array): number {
  return table.byteLength >= TABLE_HEAD ? tableWords(table).getUint32(4, true) : 0;
}

/** Where body `index` of a table lies, and its length. */
function tableEntry(table: Uint8Array, index: number): { address: number; length: number } {
  const words = tableWords(table);
  const at = TABLE_HEAD + TABLE_ENTRY * index;
  return {
    address: words.getUint32(at, true) + words.getUint32(at + 4, true) * TWO_TO_32,
    length: words.getUint32(at + 8, true) + words.getUint32(at + 12, true) * TWO_TO_32,
  };
}

/** How long a receiver waits for the chunks its sender claimed before it copies the whole body itself. */
const LATE_MS = 20;
/** Bodies of at least this many bytes are copied by both ends (a job of several chunks). */
export const SHARED_COPY_BYTES = 256 * 1024;
/** What one end claims and copies at a time: a sixteenth of the body, within these bounds (a copy call costs, fewer chunks share worse). */
const MIN_CHUNK_BYTES = 128 * 1024;
const MAX_CHUNK_BYTES = 2 * 1024 * 1024;

function chunkBytesFor(length: number): number {
  return Math.min(MAX_CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, Math.ceil(length / 16 / 4096) * 4096));
}
/** A job's chunk counter holds its sequence number above 16 bits of chunk index. */
const MAX_CHUNKS = 0xffff;
const MAX_SEQUENCE = 0x7fff;

/** Int32 indexes of a job's words in the ring header's job line (Ring.jobWords). */
const CLAIM = 0;
const DONE = 1;
const FAILED = 2;
const CHUNKS = 3;
const TARGET = 4;
const SOURCE = 6;
const LENGTH = 8;
const CHUNK = 10;

/**
 * The copy job a receiver offers its sender, in shared words: CLAIM is (sequence << 16 | next
 * chunk), 0 while there is none; both ends claim chunks by compare-and-swap on it and count the
 * chunks they copied in DONE.
 */
export class CopyJob {
  private sequence = 0;

  constructor(
    private readonly words: Int32Array,
    /** Told each time the sender was late with a chunk (the receiver copied the whole body itself). */
    private readonly onLate: () => void = () => undefined,
  ) {}

  /** Receiver: offers the copy of `length` bytes from the sender's `source` to our `target`, in chunks of `chunkBytes`; returns its sequence number. */
  open(target: number, source: number, length: number, chunkBytes: number): number {
    const words = this.words;
    this.sequence = (this.sequence % MAX_SEQUENCE) + 1;
    storeNumber(words, TARGET, target);
    storeNumber(words, SOURCE, source);
    storeNumber(words, LENGTH, length);
    Atomics.store(words, CHUNK, chunkBytes);
    Atomics.store(words, CHUNKS, Math.ceil(length / chunkBytes));
    Atomics.store(words, DONE, 0);
    Atomics.store(words, FAILED, 0);
    Atomics.store(words, CLAIM, this.sequence << 16);
    return this.sequence;
  }

  /** The next unclaimed chunk of job `sequence`, now ours; -1 when none is left (or the job is over). */
  claim(sequence: number): number {
    const words = this.words;
    for (;;) {
      const word = Atomics.load(words, CLAIM);
      const next = word & 0xffff;
      if (word >>> 16 !== sequence || next >= Atomics.load(words, CHUNKS)) return -1;
      if (Atomics.compareExchange(words, CLAIM, word, word + 1) === word) return next;
    }
  }

  /**
   * Claims the chunks of job `sequence` that are left, one at a time, and copies each with
   * `copy(offset, bytes)`; returns how many. A copy that throws counts its chunk done but failed
   * (the receiver then copies the whole body again), and the error goes on.
   */
  copyChunks(sequence: number, length: number, chunkBytes: number, copy: (offset: number, bytes: number) => void): number {
    let copied = 0;
    for (let chunk = this.claim(sequence); chunk >= 0; chunk = this.claim(sequence)) {
      const offset = chunk * chunkBytes;
      try {
        copy(offset, Math.min(chunkBytes, length - offset));
      } catch (error) {
        Atomics.store(this.words, FAILED, 1);
        throw error;
      } finally {
        Atomics.add(this.words, DONE, 1);
      }
      copied += 1;
    }
    return copied;
  }

  /**
   * Receiver: waits for the chunks the sender claimed, at most LATE_MS (a running sender copies
   * one in far less); says whether they are all in, one failed, or the sender is late.
   */
  finish(): 'done' | 'failed' | 'late' {
    const words = this.words;
    const chunks = Atomics.load(words, CHUNKS);
    const deadline = performance.now() + LATE_MS;
    for (let spins = 1; Atomics.load(words, DONE) < chunks; spins += 1) {
      if (spins % 1024 === 0 && performance.now() > deadline) return 'late';
    }
    Atomics.store(words, CLAIM, 0);
    return Atomics.load(words, FAILED) === 0 ? 'done' : 'failed';
  }

  /**
   * Receiver: a late sender may still write its chunk into the target it was given, so that
   * memory is kept from every other use, and no job is offered, until the sender counts it done
   * (or the link goes). True while that is so.
   */
  waitsForLateSender(): boolean {
    if (this.abandoned === undefined) return false;
    if (Atomics.load(this.words, DONE) < Atomics.load(this.words, CHUNKS)) return true;
    this.abandoned = undefined;
    Atomics.store(this.words, CLAIM, 0);
    return false;
  }

  /** Receiver: the sender of the open job is late; `target` waits for it (see waitsForLateSender). */
  late(target: ArrayBuffer): void {
    this.abandoned = target;
    this.onLate();
  }

  /** The target of a job whose sender was late. */
  private abandoned: ArrayBuffer | undefined;

  /** Sender: the open job with chunks left to claim, if any: its sequence number and what it copies where. */
  offered(): { sequence: number; target: number; source: number; length: number; chunkBytes: number } | undefined {
    const words = this.words;
    const word = Atomics.load(words, CLAIM);
    if (word === 0 || (word & 0xffff) >= Atomics.load(words, CHUNKS)) return undefined;
    return { sequence: word >>> 16, target: loadNumber(words, TARGET), source: loadNumber(words, SOURCE), length: loadNumber(words, LENGTH), chunkBytes: Atomics.load(words, CHUNK) };
  }
}


/**
 * Sender: copies chunks of the job its receiver offers, if the job is for bodies it lends;
 * returns the chunks it copied. Throws if it may not write the receiver's memory (after telling it).
 */
export function helpCopy(job: CopyJob, lent: LentList, pid: number, native: ShmNative): number {
  const offer = job.offered();
  if (offer === undefined) return 0;
  const body = lentBody(lent, offer.source, offer.length);
  if (body === undefined) return 0;
  return job.copyChunks(offer.sequence, offer.length, offer.chunkBytes, (offset, bytes) => native.writeChunk(pid, offer.target + offset, body, offset, bytes));
}

/** What a sender lends, oldest first. */
export interface LentList {
  readonly length: number;
  at(index: number): LentBodies;
}

/** The lent body that lies at `address` and has `length` bytes. */
function lentBody(lent: LentList, address: number, length: number): BinaryValue | undefined {
  for (let item = 0; item < lent.length; item += 1) {
    const { bodies, table } = lent.at(item);
    for (let i = 0; i < bodies.length; i += 1) {
      const entry = tableEntry(table, i);
      if (entry.address === address && entry.length === length) return bodies[i];
    }
  }
  return undefined;
}

/** Memory a receive wants a single body of `format` and `bytes` read into (DeviceHost.destinationFor), if any. */
export type Destination = (format: number, bytes: number) => Uint8Array | undefined;

/**
 * Reads the bodies a by-reference frame describes from process `pid` (a large single body
 * together with the sender, through `job`), and makes it the frame it stands for. A single body
 * goes where `destination` says, if it names memory: read by the receiver alone, since a
 * sender late with a chunk could still write it there after the receive handed it over.
 */
export function fetchBodies(frame: Frame, pid: number, native: ShmNative, job: CopyJob, destination: Destination): Frame {
  const table = viewBytes(frame.bodies[0] as ArrayBufferView);
  const format = tableFormat(table);
  let bodies: BinaryValue[];
  try {
    const single = tableCount(table) === 1 ? tableEntry(table, 0) : undefined;
    const into = single === undefined ? undefined : destination(format, single.length);
    if (single !== undefined && into !== undefined) {
      native.readChunk(pid, single.address, into, 0, single.length);
      bodies = [into];
    } else {
      const buffers = single !== undefined && single.length >= SHARED_COPY_BYTES ? [copyTogether(single, pid, native, job)] : native.fetch(pid, table);
      bodies = buffers.map(bodyOver);
    }
  } catch (error) {
    throw new TransportError(`cannot read a message's bodies from process ${pid}: ${(error as Error).message}`, { cause: error });
  }
  frame.flags &= ~FLAG_BODIES_AT_SENDER;
  frame.format = format;
  frame.bodies = bodies;
  frame.size = bodies.reduce((sum, body) => sum + body.byteLength, 0);
  frame.ownsFirstBody = bodies.length > 0;
  return frame;
}

/** Receiver: copies one large body in chunks, offering them to the sender as well. */
function copyTogether({ address, length }: { address: number; length: number }, pid: number, native: ShmNative, job: CopyJob): ArrayBuffer {
  const target = native.receiveBuffer(length);
  const chunkBytes = chunkBytesFor(length);
  if (Math.ceil(length / chunkBytes) > MAX_CHUNKS || job.waitsForLateSender()) {
    native.readChunk(pid, address, target, 0, length);
    return target;
  }
  const sequence = job.open(native.addressOf(target), address, length, chunkBytes);
  job.copyChunks(sequence, length, chunkBytes, (offset, bytes) => native.readChunk(pid, address + offset, target, offset, bytes));
  const outcome = job.finish();
  if (outcome === 'done') return target;
  if (outcome === 'late') {
    job.late(target);
    const whole = native.receiveBuffer(length);
    native.readChunk(pid, address, whole, 0, length);
    return whole;
  }
  native.readChunk(pid, address, target, 0, length);
  return target;
}
