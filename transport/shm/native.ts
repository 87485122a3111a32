/**
 * The shared-memory addon (native/shm.cc), when it is built: memory mapped by processes of one
 * host, and doorbells across them. Without it, shared memory serves threads of one process only.
 * It also holds the memory of received bodies, which every device uses: transport/body-memory.ts
 * loads it (CCJS_NO_NATIVE_SHM=1 acts as if it were not built, to test the fallback).
 */
import { memoryAddon } from '../body-memory.js';
import type { BodyMemory } from '../body-memory.js';

/** A process endpoint's doorbell: a FIFO its senders write to, watched by this thread's event loop. */
export interface Doorbell {
  /** The next byte written calls back once. */
  arm(): void;
  close(): void;
}

export interface ShmNative extends BodyMemory {
  /** A SharedArrayBuffer over segment `name` (created with `bytes`, or opened: then at least `bytes`). */
  open(name: string, bytes: number, create: boolean): SharedArrayBuffer;
  unlink(name: string): boolean;
  /** A sender's end of the doorbell at `path`: a file descriptor for ringBell and closeBell. */
  openBell(path: string): number;
  /** Writes a byte to a doorbell (nothing happens if its reader is gone or it is full). */
  ringBell(fd: number): void;
  closeBell(fd: number): void;
  /** memcpy of all of `source` into `target` (either may be over a SharedArrayBuffer). */
  copy(target: Uint8Array, source: Uint8Array): void;
  /** Where this process keeps the word canRead checks. */
  probeAddress(): number;
  /** Can this process read process `pid`'s memory (checked on its probe word at `address`)? */
  canRead(pid: number, address: number): boolean;
  /** Where `bodies` lie in this process, as a table fetch() reads (u32 format, u32 count, then u64 address and length per body). */
  bodyTable(format: number, bodies: readonly (ArrayBuffer | ArrayBufferView)[]): ArrayBuffer;
  /** The bodies `table` describes, read from process `pid`'s memory in one copy (process_vm_readv). */
  fetch(pid: number, table: Uint8Array): ArrayBuffer[];
  /** Where the bytes of `buffer` lie in this process. */
  addressOf(buffer: ArrayBuffer | ArrayBufferView): number;
  /** Copies `length` bytes at `address` in process `pid` to `target` at `offset` (process_vm_readv). */
  readChunk(pid: number, address: number, target: ArrayBuffer | ArrayBufferView, offset: number, length: number): void;
  /** Copies `length` bytes of `source` at `offset` to `address` in process `pid` (process_vm_writev). */
  writeChunk(pid: number, address: number, source: ArrayBuffer | ArrayBufferView, offset: number, length: number): void;
  /** Makes the FIFO at `path` (an error if it exists) and watches it. */
  Doorbell: new (path: string, woken: () => void) => Doorbell;
}

/** The addon, or why it cannot be had. */
export function shmNative(): ShmNative | string {
  return memoryAddon() as ShmNative | string;
}
