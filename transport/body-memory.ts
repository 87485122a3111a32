/**
 * Memory for received bodies, for every device: a buffer of its own per body (offset 0, so typed
 * arrays fit), not zero-filled, since it is about to be overwritten. A large one comes from the
 * memory of native/receive-memory.h, which the host-memory addon (native/shm.cc, built as
 * ccjs_shm) exports. This module loads that addon, for the shared-memory device too (shm/native.ts
 * types the rest of it): the frame contract's memory comes from no device.
 */
import { createRequire } from 'node:module';

/** What every device uses of the addon. */
export interface BodyMemory {
  /** Memory for a large received body, given back for the next one once the ArrayBuffer is collected (not zero-filled). */
  receiveBuffer(length: number): ArrayBuffer;
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
 * A body buffer of its own. Not from Node's shared pool, even for small bodies: a receiver may
 * transfer the typed array's buffer to a worker, which would detach every other view of a pooled
 * slab. A large one comes from the addon when it is built: memory that earlier bodies gave back
 * when they were collected, whose pages need not be faulted in again (Node copies such a buffer
 * rather than transferring it).
 */
export function freshBytes(length: number): Uint8Array {
  if (length > POOLED_BYTES) {
    const native = memoryAddon();
    if (typeof native !== 'string') return new Uint8Array(native.receiveBuffer(length));
  }
  const buffer = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}
