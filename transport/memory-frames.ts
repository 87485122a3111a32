/**
 * Whole frames written into and read out of memory in place, through typed views of it: the fast
 * path of the shared-memory device for every frame that does not wrap around its ring's end
 * (transport/stream.ts's writer and reader, on bytes, serve the others), and the UCX device's
 * small frames, which pass through an outbox and an inbox shared with its addon. The layout is
 * wire.ts's, through 32-bit words of this host's byte order (a device that crosses hosts checks
 * that they are little-endian, as wire.ts is), each frame padded to 8 bytes; a small typed-array
 * body is copied as its own type, so it neither passes through bytes nor leaves V8's heap.
 */
import type { Frame } from './frame.js';
import { TransportError } from '../src/base/errors.js';
import { TYPED_ARRAY_CODES, typeCodeOf, typedArrayOver, viewBytes } from '../src/base/typed-arrays.js';
import type { BinaryValue, TypedArrayView } from '../src/base/typed-arrays.js';
import { freshBytes } from './body-memory.js';
import { HEADER_BYTES, checkBodyCount, readHeaderWords, writeHeaderWords } from './wire.js';
import type { ByteCopy } from './stream.js';

const TWO_TO_32 = 0x1_0000_0000;
/** Bodies up to this size are copied out with slice() (V8 keeps them on its heap); larger ones into unzeroed memory. */
const SLICE_BYTES = 4096;

/** Which formats' small bodies may be read into Node's shared pool (DeviceHost.mayPoolBodies). */
export type PooledFormats = (format: number) => boolean;

const NO_FORMAT: PooledFormats = () => false;

/** Frames in memory are padded to this many bytes, so that small bodies are read in place. */
export const FRAME_ALIGNMENT = 8;

export function padded(bytes: number): number {
  return Math.ceil(bytes / FRAME_ALIGNMENT) * FRAME_ALIGNMENT;
}

/** Bytes a frame occupies in memory: header, body lengths, bodies, padding. */
export function paddedFrameBytes(frame: Frame): number {
  return padded(HEADER_BYTES + 8 * frame.bodies.length + (frame.bodies.length === 0 ? 0 : frame.size));
}

export class MemoryFrames {
  private readonly bytes: Uint8Array;
  private readonly words: Uint32Array;
  /** Views of the data area as each typed-array type, made when first needed. */
  private readonly typed: (TypedArrayView | undefined)[] = [];

  constructor(
    private readonly buffer: ArrayBufferLike,
    private readonly offset: number,
    private readonly capacity: number,
    private readonly copy: ByteCopy,
    /** For a reader: the formats whose decoders keep none of a body's bytes (none for a writer). */
    private readonly pooled: PooledFormats = NO_FORMAT,
  ) {
    this.bytes = new Uint8Array(buffer, offset, capacity);
    this.words = new Uint32Array(buffer, offset, capacity / 4);
  }

  private view(code: number): TypedArrayView {
    return (this.typed[code] ??= typedArrayOver(code, this.buffer, this.offset, this.capacity));
  }

  /** Writes `frame` at `at` (8-aligned, with paddedFrameBytes(frame) contiguous bytes free). */
  write(at: number, frame: Frame): void {
    const { bodies } = frame;
    writeHeaderWords(this.words, at / 4, frame);
    let index = at / 4 + HEADER_BYTES / 4;
    for (let i = 0; i < bodies.length; i += 1) {
      const length = (bodies[i] as BinaryValue).byteLength;
      this.words[index] = length % TWO_TO_32;
      this.words[index + 1] = length / TWO_TO_32;
      index += 2;
    }
    let position = index * 4;
    for (let i = 0; i < bodies.length; i += 1) {
      const body = bodies[i] as BinaryValue;
      const code = typeCodeOf(body) as number;
      const view = code < TYPED_ARRAY_CODES ? this.view(code) : undefined;
      // A body after the first may start unaligned for its type: it goes as bytes.
      if (view !== undefined && body.byteLength <= SLICE_BYTES && position % view.BYTES_PER_ELEMENT === 0) view.set(body as Uint8Array, position / view.BYTES_PER_ELEMENT);
      else this.copy(this.bytes, position, viewBytes(body));
      position += body.byteLength;
    }
  }

  /**
   * Reads the frame at `at` if all of it lies in [at, end); returns the bytes it took (0: not all
   * there, the byte reader takes over). Checks what the byte reader checks.
   */
  read(at: number, end: number, deliver: (frame: Frame) => void): number {
    if (end - at < HEADER_BYTES) return 0;
    const words = this.words;
    const head = at / 4;
    const count = words[head + 11] as number;
    const frame = readHeaderWords(words, head);
    checkBodyCount(frame, count);
    const total = padded(HEADER_BYTES + 8 * count + (count === 0 ? 0 : frame.size));
    if (total > end - at) return 0;
    if (count > 0) {
      const bodies: BinaryValue[] = new Array(count);
      let position = at + HEADER_BYTES + 8 * count;
      let sum = 0;
      for (let i = 0; i < count; i += 1) {
        const index = head + HEADER_BYTES / 4 + 2 * i;
        const length = (words[index] as number) + (words[index + 1] as number) * TWO_TO_32;
        sum += length;
        if (sum > frame.size) break;
        bodies[i] = this.body(frame.format, count, position, length);
        position += length;
      }
      if (sum !== frame.size) throw new TransportError(`bad frame: bodies of ${sum} bytes in a message of ${frame.size}`);
      frame.bodies = bodies;
      // Copies of their own: decoding need not ask a small typed array for its buffer (~0.3 µs) to find out.
      frame.ownsFirstBody = true;
    }
    deliver(frame);
    return total;
  }

  /**
   * A copy of the body at `position`: as its own typed-array type when the frame is one small
   * typed array. A small message of a format that `pooled` allows (the built-in serializers) goes
   * into Node's shared Buffer pool instead of a slice on V8's heap: its decoder asks the bytes for
   * their buffer, which would move a slice off the heap first (~0.15 µs a message), and it keeps
   * none of them.
   */
  private body(format: number, count: number, position: number, length: number): BinaryValue {
    if (count === 1 && format < TYPED_ARRAY_CODES && length <= SLICE_BYTES) {
      const view = this.view(format);
      const size = view.BYTES_PER_ELEMENT;
      if (position % size === 0 && length % size === 0) return view.slice(position / size, (position + length) / size) as BinaryValue;
    }
    if (length <= SLICE_BYTES && count === 1 && this.pooled(format)) {
      const inPool = Buffer.allocUnsafe(length);
      inPool.set(this.bytes.subarray(position, position + length));
      return inPool;
    }
    if (length <= SLICE_BYTES) return this.bytes.slice(position, position + length);
    const copy = freshBytes(length);
    this.copy(copy, 0, this.bytes.subarray(position, position + length));
    return copy;
  }
}
