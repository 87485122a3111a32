/**
 * One framed TCP connection to a peer endpoint. Writing: frames up to COALESCE_BYTES are copied
 * into a single buffer (one syscall, and the caller's bodies are free at once); larger ones are
 * written as a corked header plus zero-copy views of the bodies (one writev), released once the
 * kernel has them. Reading: a state machine that copies each socket chunk straight into the final,
 * separately allocated body buffers, so typed arrays are rebuilt over them without copies.
 */
import type { Socket } from 'node:net';
import { Frame, FrameType } from '../../src/engine/frame.js';
import { viewBytes, writeBinary } from '../../src/serialization/typed-arrays.js';
import type { Releasable } from '../device.js';
import { HEADER_BYTES, LAST_ENGINE_FRAME_TYPE, bodyCountOf, readHeader, readUInt64, writeHeader, writeUInt64 } from '../wire.js';
import { TransportError } from '../../src/errors.js';

/** Frames up to this size are copied into one buffer: cheaper than a writev of small pieces. */
export const COALESCE_BYTES = 64 * 1024;
/** A device-level frame: the dialling endpoint introduces itself (source = its rank, payload = job id). */
export const HELLO_FRAME = LAST_ENGINE_FRAME_TYPE + 1;
/** More bodies than any message of ours has: a corrupt or hostile frame. */
const MAX_BODIES = 1 << 16;
/** A hello's payload is a job id. */
const MAX_HELLO_BYTES = 4096;

export interface FrameHandler {
  frame(frame: Frame): void;
  hello(rank: number, payload: Buffer): void;
  closed(error: Error | undefined): void;
}

type ReadState =
  | { step: 'header' }
  | { step: 'lengths'; frame: Frame; count: number }
  | { step: 'bodies'; frame: Frame; bodies: Uint8Array[]; index: number }
  | { step: 'hello'; rank: number };

const HEADER_STATE: ReadState = { step: 'header' };

export class Connection {
  private state: ReadState = HEADER_STATE;
  /** The item being filled (header, body lengths, a body or a hello payload) and how full it is. */
  private target: Uint8Array;
  private readonly headerScratch = Buffer.allocUnsafe(HEADER_BYTES);
  private filled = 0;
  private closedError: Error | undefined;

  constructor(
    readonly socket: Socket,
    private handler: FrameHandler,
  ) {
    this.target = this.headerScratch;
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (error) => {
      this.closedError = error;
    });
    socket.on('close', () => this.handler.closed(this.closedError));
  }

  setHandler(handler: FrameHandler): void {
    this.handler = handler;
  }

  hello(rank: number, payload: Uint8Array): void {
    const buffer = Buffer.allocUnsafe(HEADER_BYTES + payload.byteLength);
    writeHeader(buffer, 0, new Frame(HELLO_FRAME as FrameType, 0, 0, rank, 0, 0, 0, 0, 0, 0, [], payload.byteLength));
    buffer.set(payload, HEADER_BYTES);
    this.socket.write(buffer);
  }

  /**
   * Writes a frame. Returns true when its bodies may be reused at once (it was copied); otherwise
   * `releasable` is told once the kernel has them. Without a releasable the frame is always copied.
   */
  send(frame: Frame, releasable: Releasable | undefined): boolean {
    const { bodies } = frame;
    const prefix = HEADER_BYTES + 8 * bodies.length;
    // Not frame.size: a ReadyToSend announces a size but carries no bodies.
    const carried = bodies.length === 0 ? 0 : frame.size;
    const coalesce = releasable === undefined || prefix + carried <= COALESCE_BYTES;
    const first = Buffer.allocUnsafe(coalesce ? prefix + carried : prefix);
    writeHeader(first, 0, frame);
    let offset = HEADER_BYTES;
    for (const body of bodies) {
      writeUInt64(first, offset, body.byteLength);
      offset += 8;
    }
    if (coalesce) {
      for (const body of bodies) {
        writeBinary(first, offset, body);
        offset += body.byteLength;
      }
      this.socket.write(first);
      return true;
    }
    this.socket.cork();
    this.socket.write(first);
    const nonEmpty = bodies.filter((body) => body.byteLength > 0);
    nonEmpty.forEach((body, index) => {
      const bytes = viewBytes(body);
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.socket.write(view, index === nonEmpty.length - 1 ? () => releasable?.released() : undefined);
    });
    this.socket.uncork();
    if (nonEmpty.length === 0) return true;
    return false;
  }

  /** Flushes what was written and closes; resolves when the socket is gone. */
  end(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) {
        resolve();
        return;
      }
      this.socket.once('close', () => resolve());
      this.socket.end();
    });
  }

  private read(chunk: Buffer): void {
    try {
      this.parse(chunk);
    } catch (error) {
      this.socket.destroy(error as Error);
    }
  }

  private parse(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      // A whole header in the chunk is read in place, without copying it into the scratch buffer.
      if (this.state === HEADER_STATE && this.filled === 0 && chunk.length - offset >= HEADER_BYTES) {
        this.header(chunk, offset);
        offset += HEADER_BYTES;
        continue;
      }
      const take = Math.min(this.target.byteLength - this.filled, chunk.length - offset);
      this.target.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.target.byteLength) this.advance();
    }
    // A frame may end on a zero-length item: finish it without waiting for more bytes.
    while (this.filled === this.target.byteLength && this.state !== HEADER_STATE) this.advance();
  }

  /** The current item is full: move the state machine to the next one. */
  private advance(): void {
    const state = this.state;
    switch (state.step) {
      case 'header':
        this.header(this.headerScratch, 0);
        return;
      case 'lengths': {
        const lengths = this.target as Buffer;
        const bodies: Uint8Array[] = [];
        let total = 0;
        for (let i = 0; i < state.count; i += 1) {
          const length = readUInt64(lengths, 8 * i);
          total += length;
          bodies.push(freshBytes(length));
        }
        if (total !== state.frame.size) throw new TransportError(`bad frame: bodies of ${total} bytes in a message of ${state.frame.size}`);
        state.frame.bodies = bodies;
        this.nextBody({ step: 'bodies', frame: state.frame, bodies, index: 0 });
        return;
      }
      case 'bodies':
        this.nextBody({ step: 'bodies', frame: state.frame, bodies: state.bodies, index: state.index + 1 });
        return;
      case 'hello': {
        const payload = this.target as Buffer;
        this.expectHeader();
        this.handler.hello(state.rank, payload);
        return;
      }
    }
  }

  /** A header is complete in `source` at `offset`. */
  private header(source: Buffer, offset: number): void {
    const frame = readHeader(source, offset);
    const count = bodyCountOf(source, offset);
    if (frame.type === (HELLO_FRAME as FrameType)) {
      if (frame.size > MAX_HELLO_BYTES) throw new TransportError(`bad hello: ${frame.size} bytes`);
      this.expect({ step: 'hello', rank: frame.source }, Buffer.allocUnsafe(frame.size));
      return;
    }
    if (frame.type === FrameType.Eager || frame.type === FrameType.Data) {
      if (count > MAX_BODIES) throw new TransportError(`bad frame: ${count} bodies`);
      if (count > 0) {
        this.expect({ step: 'lengths', frame, count }, Buffer.allocUnsafe(8 * count));
        return;
      }
      if (frame.size !== 0) throw new TransportError(`bad frame: no bodies in a message of ${frame.size} bytes`);
    }
    this.expectHeader();
    this.handler.frame(frame);
  }

  private nextBody(state: Extract<ReadState, { step: 'bodies' }>): void {
    if (state.index < state.bodies.length) {
      this.expect(state, state.bodies[state.index] as Uint8Array);
      return;
    }
    this.expectHeader();
    this.handler.frame(state.frame);
  }

  private expect(state: ReadState, target: Uint8Array): void {
    this.state = state;
    this.target = target;
    this.filled = 0;
  }

  private expectHeader(): void {
    this.expect(HEADER_STATE, this.headerScratch);
  }
}

/**
 * A body buffer of its own (offset 0, so typed arrays fit), not zero-filled: it is about to be
 * overwritten. Not from Node's shared pool, even for small bodies: a receiver may transfer the
 * typed array's buffer to a worker, which would detach every other view of a pooled slab.
 */
function freshBytes(length: number): Uint8Array {
  const buffer = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}
