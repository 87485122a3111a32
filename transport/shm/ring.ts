/**
 * A single-producer single-consumer byte ring in shared memory, lock-free: the producer owns the
 * head (bytes written), the consumer the tail (bytes read), each on its own cache line; both are
 * u32 counters that wrap, so their difference is what the ring holds. Each side keeps its own copy
 * of the other's counter and the consumer publishes its tail only every quarter of the ring (or
 * when the producer says it waits, or before it sleeps): a cache line crossing cores costs more
 * than the rest of a small message's trip, so a hop moves as few of them as it can. What goes through it is a
 * byte stream of frames (transport/stream.ts), each padded to 8 bytes: a small frame is written
 * whole when it fits, a large one in pieces as the consumer makes room (pipelined), and one that
 * does not fit waits at the producer. Nothing is dropped and the ring never grows.
 */
import { writeBinary, viewBytes } from '../../src/base/typed-arrays.js';
import type { BinaryValue } from '../../src/base/typed-arrays.js';
import { FRAME_ALIGNMENT } from '../memory-frames.js';
import { setCopy } from '../stream.js';
import type { ByteCopy } from '../stream.js';

/** Header bytes before a ring's data: three cache-line-separated words and room to spare. */
export const RING_HEADER_BYTES = 256;
/**
 * Int32 indexes of the header words. The producer's cache line: head, its waiting flag, and the
 * address of its probe word (single copy, below). The consumer's: tail, its verdict on single
 * copy, and how many frames it fetched from the producer's memory.
 */
const HEAD = 0;
const PRODUCER_WAITING = 1;
/** Two words (low, high): see storeNumber. */
const PROBE_LOW = 2;
const TAIL = 16;
const SINGLE_COPY = 17;
const FETCHED = 18;
/** A cache line of its own for the consumer's copy jobs (single-copy.ts's CopyJob). */
const JOB = 32;
const JOB_WORDS = 16;

/** The consumer's verdict on reading the producer's memory directly (SINGLE_COPY; 0 until decided). */
const READABLE = 1;
const UNREADABLE = 2;

/** Frames on a ring are padded to this many bytes, so that small bodies are read in place. */
export const RING_ALIGNMENT = FRAME_ALIGNMENT;

const TWO_TO_32 = 0x1_0000_0000;

/** Stores a non-negative integer below 2^53 (an address, a length) in the words at `index` and `index + 1`, low word first. */
export function storeNumber(words: Int32Array, index: number, value: number): void {
  Atomics.store(words, index, value % TWO_TO_32 | 0);
  Atomics.store(words, index + 1, Math.floor(value / TWO_TO_32));
}

/** The number storeNumber stored at `index`. */
export function loadNumber(words: Int32Array, index: number): number {
  return (Atomics.load(words, index) >>> 0) + (Atomics.load(words, index + 1) >>> 0) * TWO_TO_32;
}

export function ringBytes(capacity: number): number {
  return RING_HEADER_BYTES + capacity;
}

export class Ring {
  private readonly words: Int32Array;
  /** The data area as a Buffer (for the stream reader and writer), and where it starts in the buffer. */
  readonly data: Buffer;
  readonly dataOffset: number;
  private readonly mask: number;
  /** The producer's own head, or the head the consumer last read. */
  private head: number;
  /** The consumer's own tail, or the tail the producer last read. */
  private tail: number;
  /** The words of the copy job the consumer offers its producer (see single-copy.ts). */
  readonly jobWords: Int32Array;
  /** The tail the consumer last published. */
  private publishedTail: number;
  /** Unpublished bytes read after which the consumer publishes its tail. */
  private readonly releaseBytes: number;

  constructor(
    readonly buffer: SharedArrayBuffer,
    offset: number,
    readonly capacity: number,
    private readonly copy: ByteCopy = setCopy,
  ) {
    if ((capacity & (capacity - 1)) !== 0 || capacity < 4096) throw new RangeError(`ring capacity ${capacity} is not a power of two of at least 4096 bytes`);
    this.words = new Int32Array(buffer, offset, RING_HEADER_BYTES / 4);
    this.jobWords = this.words.subarray(JOB, JOB + JOB_WORDS);
    this.dataOffset = offset + RING_HEADER_BYTES;
    this.data = Buffer.from(buffer, this.dataOffset, capacity);
    this.mask = capacity - 1;
    this.head = Atomics.load(this.words, HEAD) >>> 0;
    this.tail = Atomics.load(this.words, TAIL) >>> 0;
    this.publishedTail = this.tail;
    this.releaseBytes = capacity / 4;
  }

  // ---- producer ----

  /** Bytes the producer may write now: at least `wanted` if the ring has them (its view of the tail is refreshed only when it must be). */
  room(wanted = this.capacity): number {
    const room = this.capacity - ((this.head - this.tail) >>> 0);
    if (room >= wanted) return room;
    this.tail = Atomics.load(this.words, TAIL) >>> 0;
    return this.capacity - ((this.head - this.tail) >>> 0);
  }

  /** Bytes the producer has written so far (a wrapping counter). */
  get written(): number {
    return this.head;
  }

  /** Bytes from the write position to the end of the data area. */
  private contiguous(): number {
    return this.capacity - (this.head & this.mask);
  }

  /** Where the next byte goes, when `bytes` of them fit without wrapping; -1 otherwise. */
  reserve(bytes: number): number {
    return this.contiguous() >= bytes ? this.head & this.mask : -1;
  }

  /** Copies `bytes` (at most room()) into the ring, wrapping as needed; not yet visible to the consumer. */
  put(bytes: Uint8Array): void {
    const first = Math.min(bytes.byteLength, this.contiguous());
    this.copy(this.data, this.head & this.mask, first === bytes.byteLength ? bytes : bytes.subarray(0, first));
    if (first < bytes.byteLength) this.copy(this.data, 0, bytes.subarray(first));
    this.head = (this.head + bytes.byteLength) >>> 0;
  }

  /** Copies a binary value; written in place (as its own type) when it does not wrap. */
  putBinary(value: BinaryValue): void {
    const at = this.reserve(value.byteLength);
    if (at < 0) {
      this.put(viewBytes(value));
      return;
    }
    writeBinary(this.data, at, value);
    this.head = (this.head + value.byteLength) >>> 0;
  }

  /** Marks `bytes` written in place at reserve()'s offset. */
  advance(bytes: number): void {
    this.head = (this.head + bytes) >>> 0;
  }

  /** Tells the consumer where this process keeps its probe word (see canRead in native/shm.cc). */
  offerProbe(address: number): void {
    storeNumber(this.words, PROBE_LOW, address);
  }

  /** The consumer reads large bodies straight from this producer's memory (it said so). */
  get singleCopy(): boolean {
    return Atomics.load(this.words, SINGLE_COPY) === READABLE;
  }

  /** Frames the consumer fetched from this producer's memory so far (a wrapping counter). */
  get fetched(): number {
    return Atomics.load(this.words, FETCHED) >>> 0;
  }

  /** Makes what was written visible to the consumer. */
  publish(): void {
    Atomics.store(this.words, HEAD, this.head | 0);
  }

  /** The producer waits for room: the consumer rings it once it has read (checked again after, for a race). */
  setProducerWaiting(waiting: boolean): void {
    Atomics.store(this.words, PRODUCER_WAITING, waiting ? 1 : 0);
  }

  // ---- consumer ----

  /** Feeds what the producer has published to `read` (one or two contiguous pieces); returns the bytes. */
  consume(read: (data: Buffer, start: number, end: number) => void): number {
    const head = Atomics.load(this.words, HEAD) >>> 0;
    const available = (head - this.tail) >>> 0;
    if (available === 0) return 0;
    const start = this.tail & this.mask;
    const first = Math.min(available, this.capacity - start);
    read(this.data, start, start + first);
    if (first < available) read(this.data, 0, available - first);
    this.tail = head;
    return available;
  }

  /**
   * Frees what was read for the producer once a quarter of the ring waits to be freed, or at once
   * when the producer waits for room (or `now`, before the consumer sleeps); true (once) when the
   * producer waited: the caller wakes it.
   */
  release(now = false): boolean {
    if (this.tail === this.publishedTail) return false;
    if (!now && ((this.tail - this.publishedTail) >>> 0) < this.releaseBytes && Atomics.load(this.words, PRODUCER_WAITING) === 0) return false;
    Atomics.store(this.words, TAIL, this.tail | 0);
    this.publishedTail = this.tail;
    return Atomics.load(this.words, PRODUCER_WAITING) === 1 && Atomics.compareExchange(this.words, PRODUCER_WAITING, 1, 0) === 1;
  }

  /** Where the producer keeps its probe word; undefined until it said. */
  get probe(): number | undefined {
    const address = loadNumber(this.words, PROBE_LOW);
    return address === 0 ? undefined : address;
  }

  /** Says whether this consumer can read the producer's memory directly (once, at connect). */
  decideSingleCopy(readable: boolean): void {
    Atomics.store(this.words, SINGLE_COPY, readable ? READABLE : UNREADABLE);
  }

  /** Counts a frame fetched from the producer's memory: its bodies are free again. */
  countFetched(): void {
    Atomics.add(this.words, FETCHED, 1);
  }

  /** Its shared words and this side's copies of them, for diagnostics. */
  describe(): string {
    const shared = `head ${Atomics.load(this.words, HEAD) >>> 0}, tail ${Atomics.load(this.words, TAIL) >>> 0}, producer waiting ${Atomics.load(this.words, PRODUCER_WAITING)}, fetched ${this.fetched}`;
    return `${shared}; here head ${this.head}, tail ${this.tail} (published ${this.publishedTail})`;
  }

  /** The consumer's view: is there anything to read? (No side effects.) */
  hasData(): boolean {
    return Atomics.load(this.words, HEAD) >>> 0 !== this.tail;
  }
}
