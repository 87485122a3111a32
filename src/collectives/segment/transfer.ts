/**
 * Values through a collective segment: each member writes its values once, as one stream of bytes
 * (a table of parts, then their bodies: a typed array's raw bytes, anything else as the
 * serializer encoded it), into its slot's chunks, a chunk per round; its readers copy out the
 * parts they want, round by round, and decode them. A stream longer than a chunk is pipelined:
 * the writer fills its other chunk while the readers copy the first.
 */
import type { ByteCopy } from '../../../transport/stream.js';
import { ringCopy } from '../../../transport/shm/copy.js';
import { shmNative } from '../../../transport/shm/native.js';
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

/** Encoded values as one stream of bytes: the table (u32 parts; per part u32 format, u32 bodies; per body f64 length), then the bodies. */
export class OutStream {
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
    let length = 0;
    for (const piece of [new Uint8Array(table.buffer), ...payload]) {
      this.pieces.push(piece);
      this.starts.push(length);
      length += piece.byteLength;
    }
    this.length = length;
    if (roundsOf(length) > MAX_ROUNDS) throw new CCJError(`a value of ${length} bytes is too large for a collective segment (at most ${MAX_ROUNDS * CHUNK_CAPACITY})`);
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

/** A body a reader wants: where it lies in the stream, and the memory it is copied into. */
interface Wanted {
  readonly start: number;
  readonly bytes: Uint8Array;
}

/** A reader's side of one member's stream: reads its table, then copies the bodies of the parts it wants into memory of their own. */
export class InStream {
  /** The stream's length, once its first chunk was read. */
  length: number | undefined;
  private head = new Uint8Array(64);
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
    const start = from + used;
    const end = from + chunk.byteLength;
    for (const body of this.wanted) {
      const first = Math.max(start, body.start);
      const last = Math.min(end, body.start + body.bytes.byteLength);
      if (first < last) segmentCopy(body.bytes, first - body.start, chunk.subarray(first - from, last - from));
    }
  }

  /** The parts read (undefined for those not wanted), once the whole stream was taken. */
  parts(): (EncodedValue | undefined)[] {
    return this.values;
  }

  /** Copies table bytes from the front of `chunk`; once the table is whole, lays out the bodies. Returns the bytes used. */
  private readTable(chunk: Uint8Array): number {
    let used = 0;
    for (;;) {
      const needed = this.tableBytes();
      if (needed !== undefined && this.headLength >= needed) break;
      const want = (needed ?? (this.headLength < 4 ? 4 : this.headLength + 8)) - this.headLength;
      const take = Math.min(want, chunk.byteLength - used);
      if (take <= 0) return used;
      if (this.head.byteLength < this.headLength + take) {
        const larger = new Uint8Array(Math.max(this.head.byteLength * 2, this.headLength + take));
        larger.set(this.head.subarray(0, this.headLength));
        this.head = larger;
      }
      this.head.set(chunk.subarray(used, used + take), this.headLength);
      this.headLength += take;
      used += take;
    }
    this.layOut();
    return used;
  }

  /** The table's length, once enough of it is here to tell. */
  private tableBytes(): number | undefined {
    if (this.headLength < 4) return undefined;
    const view = new DataView(this.head.buffer, 0, this.headLength);
    const parts = view.getUint32(0, true);
    if (this.headLength < 4 + parts * 8) return 4 + parts * 8;
    let bodies = 0;
    for (let part = 0; part < parts; part += 1) bodies += view.getUint32(4 + part * 8 + 4, true);
    return 4 + parts * 8 + bodies * 8;
  }

  private layOut(): void {
    const view = new DataView(this.head.buffer, 0, this.headLength);
    const parts = view.getUint32(0, true);
    let lengthAt = 4 + parts * 8;
    let start = this.tableBytes() as number;
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
          this.wanted.push({ start, bytes });
        }
        start += length;
        size += length;
      }
      this.values.push(this.wants(part) ? new EncodedValue(format, bodies, size) : undefined);
    }
  }
}

/**
 * One exchange of a call: this member writes `out` (if any) and reads the streams of `sources`
 * (into `streams`, by rank), round by round from the call's next round, until every stream is
 * whole; returns with the call's round past the exchange. A member that reads nothing says at
 * once that it reads nothing more in the call (it must not, later in the call). Every
 * member of an exchange that a later exchange follows must know how many rounds it takes.
 */
export async function exchange(call: SegmentCall, out: OutStream | undefined, sources: readonly number[], streams: readonly (InStream | undefined)[]): Promise<void> {
  const { segment } = call;
  const base = call.round;
  const ownRounds = out === undefined ? 0 : roundsOf(out.length);
  if (sources.length === 0) call.readsNoMore();
  for (let round = 0; ; round += 1) {
    const reading = sources.filter((source) => {
      const rounds = (streams[source] as InStream).rounds;
      return rounds === undefined || round < rounds;
    });
    if (round >= ownRounds && reading.length === 0) {
      call.round = base + round;
      return;
    }
    if (out !== undefined && round < ownRounds) {
      const offset = await call.claim(base + round);
      const from = round * CHUNK_CAPACITY;
      const bytes = Math.min(CHUNK_CAPACITY, out.length - from);
      out.copyTo(segment.bytes, offset, from, bytes);
      segment.setStreamLength(offset, out.length);
      call.publish(base + round, 1);
    }
    for (const source of reading) {
      await call.published(source, base + round, 1);
      const offset = segment.chunkOffset(source, call.id, base + round);
      const stream = streams[source] as InStream;
      stream.length ??= segment.streamLength(offset);
      const from = round * CHUNK_CAPACITY;
      const bytes = Math.min(CHUNK_CAPACITY, stream.length - from);
      stream.take(segment.bytes.subarray(offset, offset + bytes), from);
    }
    if (reading.length > 0) call.consumed(base + round);
  }
}
