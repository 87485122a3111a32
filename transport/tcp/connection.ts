/**
 * One framed TCP connection to a peer process. Writing: small frames are coalesced into a single
 * buffer (one syscall); large ones are written as a corked header plus zero-copy views of the
 * bodies (one writev). Reading: a state machine that copies each socket chunk straight into the
 * final, separately allocated body buffers, so typed arrays are rebuilt over them without copies.
 */
import type { Socket } from 'node:net';
import type { Packet } from '../device.js';
import { FrameType, HEADER_BYTES, readHeader, readUInt64, writeHeader, writeUInt64 } from './frame.js';
import type { FrameHeader } from './frame.js';

/** Frames up to this size are copied into one buffer: cheaper than a writev of small pieces. */
const COALESCE_BYTES = 64 * 1024;

export interface FrameHandler {
  /** `packet` for Eager and Data frames, `payload` for other frames that carry bytes (Hello). */
  frame(header: FrameHeader, packet: Packet | undefined, payload: Buffer | undefined): void;
  closed(error: Error | undefined): void;
}

type ReadState =
  | { step: 'header' }
  | { step: 'counts'; header: FrameHeader }
  | { step: 'layout'; header: FrameHeader; headLength: number; bodyCount: number }
  | { step: 'bodies'; header: FrameHeader; head: Uint8Array; bodies: Uint8Array[]; index: number }
  | { step: 'payload'; header: FrameHeader };

export class Connection {
  private state: ReadState = { step: 'header' };
  /** The item being filled (header, counts, layout, a body or a payload) and how full it is. */
  private target: Uint8Array;
  /** Headers and body counts are parsed as soon as they are complete, so one scratch each will do. */
  private readonly headerScratch = Buffer.allocUnsafe(HEADER_BYTES);
  private readonly countsScratch = Buffer.allocUnsafe(8);
  private filled = 0;
  private closedError: Error | undefined | null = null;

  constructor(
    readonly socket: Socket,
    private handler: FrameHandler,
  ) {
    this.target = this.headerScratch;
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (error) => {
      this.closedError = error;
    });
    socket.on('close', () => this.handler.closed(this.closedError ?? undefined));
  }

  setHandler(handler: FrameHandler): void {
    this.handler = handler;
  }

  /** A frame without message payload (RTS, CTS, ACK, Goodbye, Hello). */
  sendControl(header: FrameHeader, payload?: Uint8Array): void {
    const buffer = Buffer.allocUnsafe(HEADER_BYTES + (payload?.byteLength ?? 0));
    writeHeader(buffer, 0, { ...header, payloadLength: payload?.byteLength ?? 0 });
    if (payload) buffer.set(payload, HEADER_BYTES);
    this.socket.write(buffer);
  }

  /**
   * An Eager or Data frame. With `copy`, or when small, the frame is copied into one buffer and
   * the packet may be reused at once; otherwise `written` runs once the kernel has the bytes.
   */
  sendPacket(header: Omit<FrameHeader, 'payloadLength'>, packet: Packet, copy: boolean, written?: () => void): void {
    const layoutBytes = 8 + 8 * packet.bodies.length + packet.head.byteLength;
    let bodyBytes = 0;
    for (const body of packet.bodies) bodyBytes += body.byteLength;
    const prefix = HEADER_BYTES + layoutBytes;
    const coalesce = copy || prefix + bodyBytes <= COALESCE_BYTES;
    const first = Buffer.allocUnsafe(coalesce ? prefix + bodyBytes : prefix);
    writeHeader(first, 0, { ...header, payloadLength: layoutBytes + bodyBytes });
    first.writeUInt32LE(packet.head.byteLength, HEADER_BYTES);
    first.writeUInt32LE(packet.bodies.length, HEADER_BYTES + 4);
    let offset = HEADER_BYTES + 8;
    for (const body of packet.bodies) {
      writeUInt64(first, offset, body.byteLength);
      offset += 8;
    }
    first.set(packet.head, offset);
    offset += packet.head.byteLength;
    if (coalesce) {
      for (const body of packet.bodies) {
        first.set(body, offset);
        offset += body.byteLength;
      }
      this.socket.write(first, written && (() => written()));
      return;
    }
    this.socket.cork();
    this.socket.write(first);
    const nonEmpty = packet.bodies.filter((body) => body.byteLength > 0);
    nonEmpty.forEach((body, index) => {
      const view = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      this.socket.write(view, index === nonEmpty.length - 1 && written ? () => written() : undefined);
    });
    this.socket.uncork();
    if (nonEmpty.length === 0) written?.();
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
      const take = Math.min(this.target.byteLength - this.filled, chunk.length - offset);
      this.target.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.target.byteLength) this.advance();
    }
    // A frame may end on a zero-length item: finish it without waiting for more bytes.
    while (this.filled === this.target.byteLength && this.state.step !== 'header') this.advance();
  }

  /** The current item is full: move the state machine to the next one. */
  private advance(): void {
    const state = this.state;
    const full = this.target as Buffer;
    switch (state.step) {
      case 'header': {
        const header = readHeader(full, 0);
        if (header.type === FrameType.Eager || header.type === FrameType.Data) {
          this.expect({ step: 'counts', header }, this.countsScratch);
        } else if (header.payloadLength > 0) {
          this.expect({ step: 'payload', header }, Buffer.allocUnsafe(header.payloadLength));
        } else {
          this.handler.frame(header, undefined, undefined);
          this.expectHeader();
        }
        return;
      }
      case 'counts': {
        const headLength = full.readUInt32LE(0);
        const bodyCount = full.readUInt32LE(4);
        this.expect({ step: 'layout', header: state.header, headLength, bodyCount }, Buffer.allocUnsafe(8 * bodyCount + headLength));
        return;
      }
      case 'layout': {
        const bodies: Uint8Array[] = [];
        for (let i = 0; i < state.bodyCount; i += 1) bodies.push(freshBytes(readUInt64(full, 8 * i)));
        const head = new Uint8Array(full.buffer, full.byteOffset + 8 * state.bodyCount, state.headLength);
        this.nextBody({ step: 'bodies', header: state.header, head, bodies, index: 0 });
        return;
      }
      case 'bodies':
        this.nextBody({ ...state, index: state.index + 1 });
        return;
      case 'payload':
        this.handler.frame(state.header, undefined, full);
        this.expectHeader();
        return;
    }
  }

  private nextBody(state: Extract<ReadState, { step: 'bodies' }>): void {
    if (state.index < state.bodies.length) {
      this.expect(state, state.bodies[state.index]);
      return;
    }
    this.handler.frame(state.header, { head: state.head, bodies: state.bodies }, undefined);
    this.expectHeader();
  }

  private expect(state: ReadState, target: Uint8Array): void {
    this.state = state;
    this.target = target;
    this.filled = 0;
  }

  private expectHeader(): void {
    this.expect({ step: 'header' }, this.headerScratch);
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
