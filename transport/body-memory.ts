/**
 * Memory for received bodies, for every device: a buffer of its own per body (offset 0, so typed
 * arrays fit), not zero-filled, since it is about to be overwritten. A large one comes from the
 * memory of native/receive-memory.h, which the host-memory addon (native/shm.cc, built as
 * ccjs_shm) exports. This module loads that addon, for the shared-memory device too (shm/native.ts
 * types the rest of it): the frame contract's memory comes from no device.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { MAX_BYTE_VIEW, isBinaryFormat, maxBinaryBytes } from '../src/base/typed-arrays.js';

/** What every device uses of the addon. */
export interface BodyMemory {
  /**
   * Memory for a large received body, given back for the next one once the ArrayBuffer is
   * collected (not zero-filled); RangeError when there is not that much.
   */
  receiveBuffer(length: number): ArrayBuffer;
  /**
   * What that memory did in this process so far: large bodies served from memory given back by
   * earlier ones (`reused`) and from fresh memory (`fresh`), and the bytes of it idle now.
   */
  receiveMemoryStats(): { reused: number; fresh: number; idleBytes: number };
}

let loaded: BodyMemory | string | undefined;

/**
 * The host-memory addon, when it is built, or why it cannot be had. CCJS_NO_NATIVE_SHM=1 acts as
 * if it were not built (to test the fallback).
 */
export function memoryAddon(): BodyMemory | string {
  if (loaded !== undefined) return loaded;
  if (process.env.CCJS_NO_NATIVE_SHM === '1') {
    loaded = 'the shared-memory addon is switched off (CCJS_NO_NATIVE_SHM=1)';
    return loaded;
  }
  try {
    loaded = createRequire(import.meta.url)('../../build/Release/ccjs_shm.node') as BodyMemory;
  } catch (error) {
    loaded = `the shared-memory addon is not built (${(error as Error).message.split('\n')[0]}); build it with 'npm rebuild ccjs' (needs g++, make and python3)`;
  }
  return loaded;
}

/** Bodies larger than this come from the addon's memory for received bodies. */
const POOLED_BYTES = 64 * 1024;

/**
 * A body buffer of its own, of at most MAX_BYTE_VIEW bytes (see freshBody). Not from Node's
 * shared pool, even for small bodies: a receiver may transfer the typed array's buffer to a
 * worker, which would detach every other view of a pooled slab. A large one comes from the addon
 * when it is built: memory that earlier bodies gave back when they were collected, whose pages
 * need not be faulted in again (transferred to a worker, it goes back from there).
 */
export function freshBytes(length: number): Uint8Array {
  if (length > POOLED_BYTES) {
    const native = memoryAddon();
    if (typeof native !== 'string') return new Uint8Array(native.receiveBuffer(length));
  }
  const buffer = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}

/**
 * Memory for a received body of any length: freshBytes, or past MAX_BYTE_VIEW (which no Uint8Array
 * exceeds) the ArrayBuffer itself, filled through byteWindows. RangeError when there is not that much.
 */
export function freshBody(length: number): Uint8Array | ArrayBuffer {
  if (length <= MAX_BYTE_VIEW) return freshBytes(length);
  const native = memoryAddon();
  return typeof native === 'string' ? new ArrayBuffer(length) : native.receiveBuffer(length);
}

/** A received body over all of `buffer` (memory of its own): a Uint8Array where one can be that long. */
export function bodyOver(buffer: ArrayBuffer): Uint8Array | ArrayBuffer {
  return buffer.byteLength <= MAX_BYTE_VIEW ? new Uint8Array(buffer) : buffer;
}

/**
 * Most bytes a received message may have: this machine's memory, or less where a control group
 * limits this process. No receive can hold more, so a frame that declares more is refused before
 * anything is allocated.
 */
export function maxMessageBytes(): number {
  if (memoryBytes === undefined) {
    const constrained = process.constrainedMemory?.() ?? 0;
    memoryBytes = constrained > 0 ? Math.min(constrained, os.totalmem()) : os.totalmem();
  }
  return memoryBytes;
}

let memoryBytes: number | undefined;

/**
 * Why this endpoint could never hold body `index` (of `count`, `length` bytes) of a message of
 * `format`, or undefined when it could: a binary value's one body is a value of that type, a
 * serializer's first body is its bytes (one Uint8Array), and no body is longer than the message.
 */
export function unreceivable(format: number, count: number, index: number, length: number): string | undefined {
  const binary = isBinaryFormat(format) && count === 1;
  const most = binary ? maxBinaryBytes(format) : index === 0 ? MAX_BYTE_VIEW : Number.MAX_SAFE_INTEGER;
  if (length > most) return `a body of ${length} bytes, more than ${binary ? 'a value of its binary type' : "a serializer's bytes"} can have here (${most})`;
  return undefined;
}
