/**
 * Values through a collective segment: each member writes its values once, as one stream of bytes
 * (a table of parts, then their bodies: a typed array's raw bytes, anything else as the
 * serializer encoded it), into its slot's chunks, a chunk per round; its readers copy out the
 * parts they want, round by round, and decode them. A stream longer than a chunk is pipelined:
 * the writer fills its other chunk while the readers copy the first, unless every reader can read
 * the writer's memory (a thread of its process, or a process its shared-memory link lends to) and
 * the stream is at most BY_ADDRESS_MOST long: then
 * the chunk holds the table and where each body lies in the writer's process, each reader copies
 * the bodies it wants straight from there (process_vm_readv; one copy, not two, and no rounds),
 * and the writer keeps them until every member has read (Open MPI's single-copy protocols).
 */
import fs from 'node:fs';
import type { ByteCopy } from '../../../transport/stream.js';
import { ringCopy } from '../../../transport/shm/copy.js';
import { shmNative } from '../../../transport/shm/native.js';
import type { ShmNative } from '../../../transport/shm/native.js';
import { freshBytes } from '../../../transport/body-memory.js';
import { EncodedValue } from '../../engine/messages.js';
import { viewBytes } from '../../base/typed-arrays.js';
import { CCJError } from '../../base/errors.js';
import { CHUNK_CAPACITY } from './segment.js';
import type { SegmentCall } from './call.js';

/** Copies into and out of the segment: the addon's memcpy for large pieces (V8 copies a SharedArrayBuffer's bytes word by word). */
let copyFunction: ByteCopy | undefined;
export function segmentCopy(target: Uint8Array, offset: number, source: Uint8Array): void {
  if (copyFunction === undefined) {
    const native = shmNative();
    copyFunction = ringCopy(typeof native === 'string' ? undefined : native);
  }
  copyFunction(target, offset, source);
}

/** Most rounds a stream may take (the round's bits in a position). */
const MAX_ROUNDS = 0xfffe;

/** Rounds a stream of `length` bytes takes (one at least: its length travels in the first). */
function roundsOf(length: number): number {
  return Math.max(1, Math.ceil(length / CHUNK_CAPACITY));
}

const EMPTY = new Uint8Array(0);

/** A stream's table's length, as far as the `length` bytes of it in `view` tell: undefined before its count of parts. */
function tableBytes(view: DataView, length: number): number | undefined {
  if (length < 4) return undefined;
  const parts = view.getUint32(0, true);
  if (length < 4 + parts * 8) return 4 + parts * 8;
  let bodies = 0;
  for (let part = 0; part < parts; part += 1) bodies += view.getUint32(4 + part * 8 + 4, true);
  return 4 + parts * 8 + bodies * 8;
}

/**
 * The longest stream read by address. Longer ones go through the chunks, where the writer's copy
 * into a chunk and the readers' copies out of the other overlap on their cores through the cache
 * (2 processes here, broadcast best of 5: 16 MiB 1.0-1.1 ms through the chunks, 2.6-3.1 ms by
 * address, which copies memory to memory on the reader's core alone; 4 MiB about even; 1 MiB
 * 0.16 ms by address, 0.48-0.60 ms through 8 chunks' handshakes).
 */
const BY_ADDRESS_MOST = 4 * 1024 * 1024;

/** Streams longer than a chunk that this thread read, by the way they came (which path large values took: for tests and benchmarks). */
export const longStreamsRead = { byAddress: 0, throughChunks: 0 };

/** The addon, for reading bodies by address (present wherever a segment of several members is). */
function native(): ShmNative {
  return shmNative() as ShmNative;
}

/** Encoded values as one stream of bytes: the table (u32 parts; per part u32 format, u32 bodies; per body f64 length), then the bodies. */
export class OutStream {
  private readonly table: Uint8Array;
  private readonly bodies: Uint8Array[] = [];
  private readonly pieces: Uint8Array[] = [];
  private readonly starts: number[] = [];
  readonly length: number;
  /** The piece where the last copy ended (copies go forward). */
  private cursor = 0;

  constructor(parts: readonly EncodedValue[]) {
    const bodies = parts.reduce((count, part) => count + part.bodies.length, 0);
    const table = new DataView(new ArrayBuffer(4 + parts.length * 8 + bodies * 8));
    table.setUint32(0, parts.length, true);
    let at = 4;
    const payload: Uint8Array[] = [];
    for (const part of parts) {
      table.setUint32(at, part.format, true);
      table.setUint32(at + 4, part.bodies.length, true);
      at += 8;
    }
    for (const part of parts) {
      for (const body of part.bodies) {
        table.setFloat64(at, body.byteLength, true);
        at += 8;
        payload.push(viewBytes(body));
      }
    }
    this.table = new Uint8Array(table.buffer);
    this.bodies = payload;
    let length = 0;
    for (const piece of [this.table, ...payload]) {
      this.pieces.push(piece);
      this.starts.push(length);
      length += piece.byteLength;
    }
    this.length = length;
    if (roundsOf(length) > MAX_ROUNDS) throw new CCJError(`a value of ${length} bytes is too large for a collective segment (at most ${MAX_ROUNDS * CHUNK_CAPACITY})`);
  }

  /** The bytes of the stream by address (its table, then each body's address here as f64), if they fit in one chunk. */
  byAddress(): Uint8Array | undefined {
    const bytes = this.table.byteLength + this.bodies.length * 8;
    if (bytes > CHUNK_CAPACITY) return undefined;
    const stream = new Uint8Array(bytes);
    stream.set(this.table);
    const addresses = new DataView(stream.buffer, this.table.byteLength);
    const { addressOf } = native();
    this.bodies.forEach((body, index) => addresses.setFloat64(index * 8, body.byteLength === 0 ? 0 : addressOf(body), true));
    return stream;
  }

  /** Copies the stream's bytes [from, from + bytes) into `target` at `offset`. */
  copyTo(target: Uint8Array, offset: number, from: number, bytes: number): void {
    if (from < (this.starts[this.cursor] as number)) this.cursor = 0;
    let at = from;
    const end = from + bytes;
    while (at < end) {
      const piece = this.pieces[this.cursor] as Uint8Array;
      const start = this.starts[this.cursor] as number;
      if (at >= start + piece.byteLength) {
        this.cursor += 1;
        continue;
      }
      const take = Math.min(end, start + piece.byteLength) - at;
      segmentCopy(target, offset + (at - from), piece.subarray(at - start, at - start + take));
      at += take;
    }
  }
}

/** A body a reader wants: where it lies in the stream (and which body of it it is), and the memory it is copied into. */
interface Wanted {
  readonly start: number;
  readonly index: number;
  readonly bytes: Uint8Array;
}

/** A reader's side of one member's stream: reads its table, then copies the bodies of the parts it wants into memory of their own. */
export class InStream {
  /** The stream's length, once its first chunk was read. */
  length: number | undefined;
  /** The writer's process, where its first chunk said the bodies are read by address there. */
  readFrom: number | undefined;
  /** The table's bytes so far, where it spans chunks. */
  private head = EMPTY;
  private headLength = 0;
  private tableLength: number | undefined;
  private wanted: Wanted[] = [];
  private values: (EncodedValue | undefined)[] = [];

  constructor(private readonly wants: (part: number) => boolean) {}

  /** Rounds the stream takes (known once its first chunk was read). */
  get rounds(): number | undefined {
    return this.length === undefined ? undefined : roundsOf(this.length);
  }

  /** The stream's bytes [from, from + chunk.length), in order. */
  take(chunk: Uint8Array, from: number): void {
    let used = 0;
    if (this.tableLength === undefined) {
      used = this.readTable(chunk);
      if (this.tableLength === undefined) return;
    }
    if (this.readFrom !== undefined) {
      this.readByAddress(this.readFrom, chunk.subarray(used));
      return;
    }
    const start = from + used;
    const end = from + chunk.byteLength;
    for (const body of this.wanted) {
      const first = Math.max(start, body.start);
      const last = Math.min(end, body.start + body.bytes.byteLength);
      if (first < last) segmentCopy(body.bytes, first - body.start, chunk.subarray(first - from, last - from));
    }
  }

  /** Copies the wanted bodies from process `pid` at the addresses that follow the table. */
  private readByAddress(pid: number, addresses: Uint8Array): void {
    const view = new DataView(addresses.buffer, addresses.byteOffset, addresses.byteLength);
    const { readChunk } = native();
    for (const body of this.wanted) {
      if (body.bytes.byteLength > 0) readChunk(pid, view.getFloat64(body.index * 8, true), body.bytes, 0, body.bytes.byteLength);
    }
  }

  /** The parts read (undefined for those not wanted), once the whole stream was taken. */
  parts(): (EncodedValue | undefined)[] {
    return this.values;
  }

  /** Reads the table from the front of `chunk` (copying what there is of it where it goes on in the next); once it is whole, lays out the bodies. Returns the bytes used. */
  private readTable(chunk: Uint8Array): number {
    if (this.headLength === 0) {
      // The common case: the whole table in the first chunk, read where it is.
      const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const whole = tableBytes(view, chunk.byteLength);
      if (whole !== undefined && whole <= chunk.byteLength) {
        this.layOut(view, whole);
        return whole;
      }
    }
    let used = 0;
    for (;;) {
      const needed = tableBytes(new DataView(this.head.buffer, 0, this.headLength), this.headLength);
      if (needed !== undefined && this.headLength >= needed) break;
      const want = (needed ?? (this.headLength < 4 ? 4 : this.headLength + 8)) - this.headLength;
      const take = Math.min(want, chunk.byteLength - used);
      if (take <= 0) return used;
      if (this.head.byteLength < this.headLength + take) {
        const larger = new Uint8Array(Math.max(this.head.byteLength * 2, this.headLength + take, 64));
        larger.set(this.head.subarray(0, this.headLength));
        this.head = larger;
      }
      this.head.set(chunk.subarray(used, used + take), this.headLength);
      this.headLength += take;
      used += take;
    }
    this.layOut(new DataView(this.head.buffer, 0, this.headLength), this.headLength);
    return used;
  }

  /** Lays out the bodies of the table in `view` (`length` bytes long). */
  private layOut(view: DataView, length: number): void {
    const parts = view.getUint32(0, true);
    let lengthAt = 4 + parts * 8;
    let start = length;
    let index = 0;
    this.tableLength = start;
    for (let part = 0; part < parts; part += 1) {
      const format = view.getUint32(4 + part * 8, true);
      const count = view.getUint32(4 + part * 8 + 4, true);
      const bodies: Uint8Array[] = [];
      let size = 0;
      for (let body = 0; body < count; body += 1) {
        const length = view.getFloat64(lengthAt, true);
        lengthAt += 8;
        if (this.wants(part)) {
          // Receive memory that earlier values gave back (no fresh pages to fault in).
          const bytes = freshBytes(length);
          bodies.push(bytes);
          this.wanted.push({ start, index, bytes });
        }
        index += 1;
        start += length;
        size += length;
      }
      this.values.push(this.wants(part) ? new EncodedValue(format, bodies, size) : undefined);
    }
  }
}

/** Whether reading from process `pid` failed with `error` because the process is gone (or dying: killed, not yet reaped). */
function writerGone(pid: number, error: unknown): boolean {
  if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
  try {
    const state = /\) (\S)/.exec(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

/**
 * One exchange of a call: this member writes `out` (if any) and reads the streams of `sources`
 * (into `streams`, by rank), round by round from the call's next round, until every stream is
 * whole; returns with the call's round past the exchange (and, where its stream went by address,
 * once every member has read it). A member that reads nothing says at once that it reads nothing
 * more in the call (it must not, later in the call). Every member of an exchange that a later
 * exchange follows must know how many rounds it takes.
 */
export async function exchange(call: SegmentCall, out: OutStream | undefined, sources: readonly number[], streams: readonly (InStream | undefined)[]): Promise<void> {
  const { segment } = call;
  const base = call.round;
  // Longer than a chunk: by address where every member can read this one's memory.
  const byAddress = out !== undefined && out.length > CHUNK_CAPACITY && out.length <= BY_ADDRESS_MOST && call.size > 1 && call.othersReadHere() ? out.byAddress() : undefined;
  const ownRounds = out === undefined ? 0 : byAddress !== undefined ? 1 : roundsOf(out.length);
  if (sources.length === 0) call.readsNoMore();
  for (let round = 0; ; round += 1) {
    const reading = sources.filter((source) => {
      const rounds = (streams[source] as InStream).rounds;
      return rounds === undefined || round < rounds;
    });
    if (round >= ownRounds && reading.length === 0) {
      call.round = base + round;
      // Its bodies stay as they are until every member has read them.
      if (byAddress !== undefined && out !== undefined) await call.readByAll(base, out.length);
      return;
    }
    if (out !== undefined && round < ownRounds) {
      const claimed = call.claim(base + round);
      const offset = typeof claimed === 'number' ? claimed : await claimed;
      if (byAddress !== undefined) {
        segmentCopy(segment.bytes, offset, byAddress);
        segment.setStream(offset, byAddress.byteLength, true);
      } else {
        const from = round * CHUNK_CAPACITY;
        out.copyTo(segment.bytes, offset, from, Math.min(CHUNK_CAPACITY, out.length - from));
        segment.setStream(offset, out.length, false);
      }
      call.publish(base + round, 1);
    }
    for (const source of reading) {
      const publishing = call.published(source, base + round, 1);
      if (publishing !== undefined) await publishing;
      const offset = segment.chunkOffset(source, call.id, base + round);
      const stream = streams[source] as InStream;
      if (stream.length === undefined) {
        stream.length = segment.streamLength(offset);
        if (segment.byAddress(offset)) {
          stream.readFrom = segment.pidOf(source);
          longStreamsRead.byAddress += 1;
        } else if (stream.length > CHUNK_CAPACITY) {
          longStreamsRead.throughChunks += 1;
        }
      }
      const from = round * CHUNK_CAPACITY;
      const bytes = Math.min(CHUNK_CAPACITY, stream.length - from);
      try {
        stream.take(segment.bytes.subarray(offset, offset + bytes), from);
      } catch (error) {
        // A writer keeps its bodies until every member has read them: where they cannot be read, its process is gone, and its loss fails the call.
        if (stream.readFrom === undefined || !writerGone(stream.readFrom, error)) throw error;
        await call.lossOf(source);
      }
    }
    if (reading.length > 0) call.consumed(base + round);
  }
}
