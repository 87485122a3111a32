/**
 * One framed TCP connection to a peer endpoint. Writing: frames up to COALESCE_BYTES are copied
 * into a single buffer (one syscall, and the caller's bodies are free at once); larger ones are
 * written as a corked prefix plus zero-copy views of the bodies (one writev), released once the
 * kernel has them. Reading: transport/stream.ts's FrameReader.
 */
import type { Socket } from 'node:net';
import { asFrameError } from '../frame.js';
import type { Frame } from '../frame.js';
import { byteWindows, writeBinary } from '../../src/base/typed-arrays.js';
import type { Releasable } from '../device.js';
import type { FrameError } from '../../src/base/errors.js';
import { FrameReader, carriedBytes, helloBytes, prefixBytes, writePrefix } from '../stream.js';
import type { FrameHandler } from '../stream.js';
import { BLOCK_HEADER_BYTES, BlockReader, writeBlockHeader } from './checked-blocks.js';
import { crc32c } from '../crc32c.js';

/** Frames up to this size are copied into one buffer: cheaper than a writev of small pieces. */
export const COALESCE_BYTES = 64 * 1024;

export interface ConnectionHandler extends FrameHandler {
  closed(error: Error | undefined): void;
  /** The peer sent bytes that are no frame of ours (`error` says what): nothing more is read from it; the socket stays open for writing until `end`. */
  refused(error: FrameError): void;
}

export class Connection {
  private readonly reader: FrameReader;
  private closedError: Error | undefined;
  /** The peer's bytes stopped making sense: the rest is not read. */
  private refusing = false;

  /** With the checksum: the blocks' reader, what the current block's frames made (held until it proves whole), and what failed in it. */
  private readonly blocks: BlockReader | undefined;
  private held: (() => void)[] = [];
  private blockFailure: unknown;

  constructor(
    readonly socket: Socket,
    private handler: ConnectionHandler,
    /** Every write is a checked block (checked-blocks.ts), and so must every read be. */
    private readonly checksum = false,
  ) {
    this.reader = new FrameReader(checksum ? { frame: (frame) => this.held.push(() => this.handler.frame(frame)), hello: (rank, payload) => this.held.push(() => this.handler.hello(rank, payload)) } : handler);
    this.blocks = checksum ? new BlockReader({ piece: (source, start, end) => this.piece(source, start, end), whole: () => this.whole() }) : undefined;
    socket.on('data', (chunk: Buffer) => {
      if (this.refusing) return;
      try {
        if (this.blocks === undefined) this.reader.feed(chunk, 0, chunk.length);
        else this.blocks.feed(chunk);
      } catch (error) {
        this.refusing = true;
        this.handler.refused(asFrameError(error));
      }
    });
    socket.on('error', (error) => {
      this.closedError = error;
    });
    socket.on('close', () => this.handler.closed(this.closedError));
  }

  setHandler(handler: ConnectionHandler): void {
    this.handler = handler;
    if (!this.checksum) this.reader.setHandler(handler);
  }

  hello(rank: number, payload: Uint8Array): void {
    const bytes = helloBytes(rank, payload);
    if (this.checksum) {
      const header = Buffer.allocUnsafe(BLOCK_HEADER_BYTES);
      writeBlockHeader(header, 0, bytes.length, crc32c(bytes));
      this.socket.write(header);
    }
    this.socket.write(bytes);
  }

  /** A piece of a checked block: read, unless the block already failed (its checksum then says whether the bytes or the peer were wrong). */
  private piece(source: Buffer, start: number, end: number): void {
    if (this.blockFailure !== undefined) return;
    try {
      this.reader.feed(source, start, end);
    } catch (error) {
      this.blockFailure = error;
    }
  }

  /** A checked block proved whole: what it held is delivered, or what failed in it is thrown. */
  private whole(): void {
    const failure = this.blockFailure;
    const held = this.held;
    this.held = [];
    if (failure !== undefined) throw failure;
    for (const deliver of held) deliver();
  }

  /**
   * Writes a frame. Returns true when its bodies may be reused at once (it was copied); otherwise
   * `releasable` is told once the kernel has them. Without a releasable the frame is always copied.
   */
  send(frame: Frame, releasable: Releasable | undefined): boolean {
    const prefix = prefixBytes(frame);
    const carried = carriedBytes(frame);
    const coalesce = releasable === undefined || prefix + carried <= COALESCE_BYTES;
    const block = this.checksum ? BLOCK_HEADER_BYTES : 0;
    const first = Buffer.allocUnsafe(block + (coalesce ? prefix + carried : prefix));
    let offset = block + writePrefix(first, block, frame);
    if (coalesce) {
      for (const body of frame.bodies) {
        writeBinary(first, offset, body);
        offset += body.byteLength;
      }
      if (this.checksum) writeBlockHeader(first, 0, prefix + carried, crc32c(first.subarray(block)));
      this.socket.write(first);
      return true;
    }
    // A body longer than one view (MAX_BYTE_VIEW) goes as several.
    const views = frame.bodies.filter((body) => body.byteLength > 0).flatMap((body) => byteWindows(body));
    if (this.checksum) {
      let crc = crc32c(first.subarray(block));
      for (const bytes of views) crc = crc32c(bytes, crc);
      writeBlockHeader(first, 0, prefix + carried, crc);
    }
    this.socket.cork();
    this.socket.write(first);
    views.forEach((bytes, index) => {
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      this.socket.write(view, index === views.length - 1 ? () => releasable?.released() : undefined);
    });
    this.socket.uncork();
    return views.length === 0;
  }

  /**
   * Closes after what was written (a goodbye) reached the peer: a socket destroyed with bytes
   * unread here would reset the connection, and the peer might lose them. A peer that does not
   * close its side is cut after `graceMs`.
   */
  endSoon(graceMs: number): void {
    this.refusing = true;
    this.socket.end();
    setTimeout(() => this.socket.destroy(), graceMs).unref();
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
