/**
 * The tcp device's opt-in checksum (option `checksum`): every write, a frame or a hello, goes as
 * a block, a 16-byte header (u64 length of the payload, u32 CRC32C of the payload, u32 CRC32C of
 * the header's first 12 bytes) before the payload. The reader passes each piece of a payload on as
 * it comes; the caller holds what it made of them until the block's end says the bytes were whole.
 */
import { crc32c, expectSum } from '../crc32c.js';
import { FrameError } from '../../src/base/errors.js';
import { MAGIC, readUInt64, writeUInt64 } from '../wire.js';

export const BLOCK_HEADER_BYTES = 16;

/** Writes the header of a block of `length` payload bytes whose CRC32C is `crc` at `target[offset]`. */
export function writeBlockHeader(target: Buffer, offset: number, length: number, crc: number): void {
  writeUInt64(target, offset, length);
  target.writeUInt32LE(crc, offset + 8);
  target.writeUInt32LE(crc32c(target.subarray(offset, offset + 12)), offset + 12);
}

export interface BlockSink {
  /** Bytes `source[start, end)` of the current block's payload. */
  piece(source: Buffer, start: number, end: number): void;
  /** The current block's payload is complete and matches its checksum. */
  whole(): void;
}

export class BlockReader {
  private readonly header = Buffer.allocUnsafe(BLOCK_HEADER_BYTES);
  private headerFilled = 0;
  /** Payload bytes still to come in the current block, its expected CRC and the CRC so far. */
  private remaining = -1;
  private expected = 0;
  private crc = 0;

  constructor(private readonly sink: BlockSink) {}

  /** Reads `chunk`; throws FrameError ('checksum') for a block whose bytes do not match. */
  feed(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining < 0) {
        const take = Math.min(BLOCK_HEADER_BYTES - this.headerFilled, chunk.length - offset);
        chunk.copy(this.header, this.headerFilled, offset, offset + take);
        this.headerFilled += take;
        offset += take;
        if (this.headerFilled === BLOCK_HEADER_BYTES) this.startBlock();
        continue;
      }
      const end = Math.min(chunk.length, offset + this.remaining);
      this.crc = crc32c(chunk.subarray(offset, end), this.crc);
      this.remaining -= end - offset;
      this.sink.piece(chunk, offset, end);
      offset = end;
      this.endBlockIfDone();
    }
  }

  private startBlock(): void {
    const header = this.header;
    this.headerFilled = 0;
    if (header.readUInt32LE(12) !== crc32c(header.subarray(0, 12))) {
      throw new FrameError('checksum', `a block header whose checksum does not match${header[0] === MAGIC ? ' (it reads as a frame without a checksum: every process of a job must set checksum alike)' : ''}`);
    }
    this.remaining = readUInt64(header, 0);
    this.expected = header.readUInt32LE(8);
    this.crc = 0;
    this.endBlockIfDone();
  }

  private endBlockIfDone(): void {
    if (this.remaining !== 0) return;
    this.remaining = -1;
    expectSum(this.crc, this.expected);
    this.sink.whole();
  }
}
