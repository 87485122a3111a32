/**
 * Frames on a byte stream, for the devices that move bytes (a TCP connection, a shared-memory
 * ring): the prefix a writer puts before the bodies (transport/wire.ts's header and the body
 * lengths), and a reader that turns arriving bytes back into frames, whatever pieces they come in.
 * The reader copies each piece straight into the final, separately allocated body buffers, so that
 * typed arrays are rebuilt over them without further copies; a small typed array is read as its
 * own type at once, which keeps it on V8's heap.
 */
import { Frame, FrameType } from './frame.js';
import { FrameError, TransportError } from '../src/base/errors.js';
import { TYPED_ARRAY_CODES, TYPED_ARRAY_TYPES, byteWindows } from '../src/base/typed-arrays.js';
import { freshBody } from './body-memory.js';
import { HEADER_BYTES, LAST_ENGINE_FRAME_TYPE, bodyCountOf, checkBodyCount, checkBodyLength, readHeader, readUInt64, writeHeader, writeUInt64 } from './wire.js';

/** A device-level frame: the dialling endpoint introduces itself (source = its rank, payload = job id). */
export const HELLO_FRAME = LAST_ENGINE_FRAME_TYPE + 1;
/** A hello's payload is a job id. */
const MAX_HELLO_BYTES = 4096;
/** Bodies up to this size are read element by element into a typed array of their own type (on V8's heap). */
const SMALL_BODY_BYTES = 64;

/** Bytes before a frame's bodies: the header and one u64 length per body. */
export function prefixBytes(frame: Frame): number {
  return HEADER_BYTES + 8 * frame.bodies.length;
}

/** The bytes a frame's bodies occupy (not frame.size: a ReadyToSend announces a size but carries no bodies). */
export function carriedBytes(frame: Frame): number {
  return frame.bodies.length === 0 ? 0 : frame.size;
}

/** Writes the header and the body lengths at `offset`; returns the prefix's length. */
export function writePrefix(target: Buffer, offset: number, frame: Frame): number {
  writeHeader(target, offset, frame);
  let at = offset + HEADER_BYTES;
  for (const body of frame.bodies) {
    writeUInt64(target, at, body.byteLength);
    at += 8;
  }
  return at - offset;
}

/** A hello frame's bytes. */
export function helloBytes(rank: number, payload: Uint8Array): Buffer {
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + payload.byteLength);
  writeHeader(buffer, 0, new Frame(HELLO_FRAME as FrameType, 0, 0, rank, 0, 0, 0, 0, 0, 0, [], payload.byteLength));
  buffer.set(payload, HEADER_BYTES);
  return buffer;
}

/** Copies all of `source` into `target` at `offset`. */
export type ByteCopy = (target: Uint8Array, offset: number, source: Uint8Array) => void;

export const setCopy: ByteCopy = (target, offset, source) => target.set(source, offset);

export interface FrameHandler {
  frame(frame: Frame): void;
  hello(rank: number, payload: Buffer): void;
}

type ReadState =
  | { step: 'header' }
  | { step: 'lengths'; frame: Frame; count: number }
  | { step: 'bodies'; frame: Frame; lengths: number[]; index: number }
  | { step: 'padding'; frame: Frame | undefined }
  | { step: 'hello'; rank: number };

const HEADER_STATE: ReadState = { step: 'header' };

/** Small bodies pass through here, aligned whatever their offset in the stream. */
const SMALL_SCRATCH = new Uint8Array(SMALL_BODY_BYTES);

/** By type code: reads a small typed array from a Buffer into a new one of its own type (small, so on V8's heap). */
const SMALL_READERS: readonly ((source: Buffer, offset: number, length: number) => ArrayBufferView)[] = TYPED_ARRAY_TYPES.map((type) => {
  const scratch = new type(SMALL_SCRATCH.buffer);
  return (source, offset, length) => {
    for (let i = 0; i < length; i += 1) SMALL_SCRATCH[i] = source[offset + i] as number;
    return scratch.slice(0, length / type.BYTES_PER_ELEMENT);
  };
});

/**
 * Turns bytes back into frames. `align` > 1: every frame is followed by padding to a multiple of
 * `align` bytes (the rings keep frames aligned so that small bodies are read in place).
 */
export class FrameReader {
  private state: ReadState = HEADER_STATE;
  /** The item being filled (header, body lengths, a body, padding or a hello payload) and how full it is. */
  private target: Uint8Array;
  private readonly headerScratch = Buffer.allocUnsafe(HEADER_BYTES);
  private filled = 0;
  /** Bytes of the current frame so far, for its padding. */
  private frameBytes = 0;
  /** The next body is a small typed array, not allocated yet: read it in one go if it is all there. */
  private smallBodyPending = false;
  /** The rest of a body longer than one view (MAX_BYTE_VIEW), to be filled after `target`. */
  private windowsLeft: Uint8Array[] = [];

  constructor(
    private handler: FrameHandler,
    private readonly align = 1,
    /** How bytes go from the source into a body (the rings' is faster for large pieces). */
    private readonly copy: ByteCopy = setCopy,
  ) {
    this.target = this.headerScratch;
  }

  setHandler(handler: FrameHandler): void {
    this.handler = handler;
  }

  /** True between frames. */
  get idle(): boolean {
    return this.state === HEADER_STATE && this.filled === 0;
  }

  /** Reads `source[start, end)`; throws TransportError for bytes that are no frame of ours. */
  feed(source: Buffer, start: number, end: number): void {
    let offset = start;
    while (offset < end) {
      const state = this.state;
      // A whole header in the chunk is read in place, without copying it into the scratch buffer.
      if (state === HEADER_STATE && this.filled === 0 && end - offset >= HEADER_BYTES) {
        this.header(source, offset);
        offset += HEADER_BYTES;
        continue;
      }
      if (this.smallBodyPending) {
        const { frame, lengths, index } = state as Extract<ReadState, { step: 'bodies' }>;
        const length = lengths[index] as number;
        this.smallBodyPending = false;
        if (end - offset >= length) {
          // A whole small body of a typed array is read as its own type.
          frame.bodies[index] = (SMALL_READERS[frame.format] as (typeof SMALL_READERS)[number])(source, offset, length);
          offset += length;
          this.frameBytes += length;
          this.nextBody(frame, lengths, index + 1);
          continue;
        }
        this.allocateBody(frame, index, length);
      }
      const take = Math.min(this.target.byteLength - this.filled, end - offset);
      this.copy(this.target, this.filled, source.subarray(offset, offset + take));
      this.filled += take;
      this.frameBytes += take;
      offset += take;
      if (this.filled === this.target.byteLength) this.advance();
    }
    // A frame may end on a zero-length item: finish it without waiting for more bytes.
    while (!this.smallBodyPending && this.filled === this.target.byteLength && this.state !== HEADER_STATE) this.advance();
  }

  /** The current item is full: move the state machine to the next one. */
  private advance(): void {
    const state = this.state;
    switch (state.step) {
      case 'header':
        this.header(this.headerScratch, 0);
        return;
      case 'lengths': {
        const bytes = this.target as Buffer;
        const lengths: number[] = [];
        let total = 0;
        for (let i = 0; i < state.count; i += 1) {
          const length = readUInt64(bytes, 8 * i);
          checkBodyLength(state.frame, state.count, i, length);
          total += length;
          lengths.push(length);
        }
        if (total !== state.frame.size) throw new FrameError('size', `bad frame: bodies of ${total} bytes in a message of ${state.frame.size}`);
        state.frame.bodies = new Array(state.count);
        this.nextBody(state.frame, lengths, 0);
        return;
      }
      case 'bodies': {
        const window = this.windowsLeft.shift();
        if (window !== undefined) this.expect(state, window);
        else this.nextBody(state.frame, state.lengths, state.index + 1);
        return;
      }
      case 'padding':
        this.finish(state.frame);
        return;
      case 'hello': {
        const payload = this.target as Buffer;
        this.expect(HEADER_STATE, this.headerScratch);
        this.handler.hello(state.rank, payload);
        return;
      }
    }
  }

  /** A header is complete in `source` at `offset`. */
  private header(source: Buffer, offset: number): void {
    const frame = readHeader(source, offset);
    const count = bodyCountOf(source, offset);
    this.frameBytes = HEADER_BYTES;
    if (frame.type === (HELLO_FRAME as FrameType)) {
      if (frame.size > MAX_HELLO_BYTES) throw new TransportError(`bad hello: ${frame.size} bytes`);
      this.expect({ step: 'hello', rank: frame.source }, Buffer.allocUnsafe(frame.size));
      return;
    }
    checkBodyCount(frame, count);
    if (count > 0) {
      this.expect({ step: 'lengths', frame, count }, Buffer.allocUnsafe(8 * count));
      return;
    }
    this.pad(frame);
  }

  private nextBody(frame: Frame, lengths: number[], index: number): void {
    if (index === lengths.length) {
      this.pad(frame);
      return;
    }
    const length = lengths[index] as number;
    this.state = { step: 'bodies', frame, lengths, index };
    this.filled = 0;
    if (lengths.length === 1 && frame.format < TYPED_ARRAY_CODES && length > 0 && length <= SMALL_BODY_BYTES && length % elementBytes(frame.format) === 0) {
      this.smallBodyPending = true;
      return;
    }
    this.allocateBody(frame, index, length);
  }

  private allocateBody(frame: Frame, index: number, length: number): void {
    let body: Uint8Array | ArrayBuffer;
    try {
      body = freshBody(length);
    } catch (error) {
      throw new TransportError(`cannot allocate a received body of ${length} bytes: ${(error as Error).message}`, { cause: error });
    }
    frame.bodies[index] = body;
    const [first, ...rest] = body instanceof Uint8Array ? [body] : byteWindows(body);
    this.windowsLeft = rest;
    this.target = first as Uint8Array;
    this.filled = 0;
  }

  /** The frame is read: skip the padding after it, if any, then hand it over. */
  private pad(frame: Frame): void {
    const padding = (this.align - (this.frameBytes % this.align)) % this.align;
    if (padding === 0) {
      this.finish(frame);
      return;
    }
    this.expect({ step: 'padding', frame }, this.headerScratch.subarray(0, padding));
  }

  private finish(frame: Frame | undefined): void {
    this.expect(HEADER_STATE, this.headerScratch);
    if (frame === undefined) return;
    // Every body was made here, for this frame alone (decoding then need not check).
    frame.ownsFirstBody = frame.bodies.length > 0;
    this.handler.frame(frame);
  }

  private expect(state: ReadState, target: Uint8Array): void {
    this.state = state;
    this.target = target;
    this.filled = 0;
  }
}

function elementBytes(code: number): number {
  return (TYPED_ARRAY_TYPES[code] as (typeof TYPED_ARRAY_TYPES)[number]).BYTES_PER_ELEMENT;
}
