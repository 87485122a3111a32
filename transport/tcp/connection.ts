/**
 * One framed TCP connection to a peer endpoint. Writing: frames up to COALESCE_BYTES are copied
 * into a single buffer (one syscall, and the caller's bodies are free at once); larger ones are
 * written as a corked prefix plus zero-copy views of the bodies (one writev), released once the
 * kernel has them. Reading: transport/stream.ts's FrameReader.
 */
import type { Socket } from 'node:net';
import type { Frame } from '../frame.js';
import { byteWindows, writeBinary } from '../../src/base/typed-arrays.js';
import type { Releasable } from '../device.js';
import { FrameReader, carriedBytes, helloBytes, prefixBytes, writePrefix } from '../stream.js';
import type { FrameHandler } from '../stream.js';

/** Frames up to this size are copied into one buffer: cheaper than a writev of small pieces. */
export const COALESCE_BYTES = 64 * 1024;

export interface ConnectionHandler extends FrameHandler {
  closed(error: Error | undefined): void;
}

export class Connection {
  private readonly reader: FrameReader;
  private closedError: Error | undefined;

  constructor(
    readonly socket: Socket,
    private handler: ConnectionHandler,
  ) {
    this.reader = new FrameReader(handler);
    socket.on('data', (chunk: Buffer) => {
      try {
        this.reader.feed(chunk, 0, chunk.length);
      } catch (error) {
        socket.destroy(error as Error);
      }
    });
    socket.on('error', (error) => {
      this.closedError = error;
    });
    socket.on('close', () => this.handler.closed(this.closedError));
  }

  setHandler(handler: ConnectionHandler): void {
    this.handler = handler;
    this.reader.setHandler(handler);
  }

  hello(rank: number, payload: Uint8Array): void {
    this.socket.write(helloBytes(rank, payload));
  }

  /**
   * Writes a frame. Returns true when its bodies may be reused at once (it was copied); otherwise
   * `releasable` is told once the kernel has them. Without a releasable the frame is always copied.
   */
  send(frame: Frame, releasable: Releasable | undefined): boolean {
    const prefix = prefixBytes(frame);
    const carried = carriedBytes(frame);
    const coalesce = releasable === undefined || prefix + carried <= COALESCE_BYTES;
    const first = Buffer.allocUnsafe(coalesce ? prefix + carried : prefix);
    let offset = writePrefix(first, 0, frame);
    if (coalesce) {
      for (const body of frame.bodies) {
        writeBinary(first, offset, body);
        offset += body.byteLength;
      }
      this.socket.write(first);
      return true;
    }
    this.socket.cork();
    this.socket.write(first);
    // A body longer than one view (MAX_BYTE_VIEW) goes as several.
    const views = frame.bodies.filter((body) => body.byteLength > 0).flatMap((body) => byteWindows(body));
    views.forEach((bytes, index) => {
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.socket.write(view, index === views.length - 1 ? () => releasable?.released() : undefined);
    });
    this.socket.uncork();
    return views.length === 0;
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
}
