/**
 * The UCX addon (native/ucx.cc), when it is built: a UCP worker per endpoint moving whole frames.
 * It is built during npm install when UCX's headers are there (libucx-dev); CCJS_NO_UCX=1 acts as
 * if it were not (to test the fallback), at install and at run time.
 */
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The kinds of the inbox's records. The inbox holds a count of records (u32), padding to 8 bytes,
 * then the records: four u32 words (kind, rank, value, length) and, for RECEIVED, a frame of
 * `length` bytes in memory-frames.ts's layout (padded to 8).
 */
export const RecordKind = {
  /** A frame in the inbox, after the record. */
  RECEIVED: 1,
  /** Large sends to `rank` may be reused: value is the token send() was given. */
  SENT: 2,
  /** UCX reports `rank` unreachable: value is UCX's status (statusText). */
  LOST: 3,
  /** A frame that takeHeld() gives, in the order of these records. */
  HELD: 4,
  /** A receive from `rank` failed: value is UCX's status. */
  RECEIVE_FAILED: 5,
} as const;
export const RECORDS_AT = 8;
export const RECORD_BYTES = 16;

/** A part of a held frame: received into new memory, into the buffer expected for it, or deferred (its length; see receiveHeld). */
export type HeldPart = ArrayBuffer | Uint8Array | number;

export interface UcxWorker {
  /** This worker's address, for peers to connect to. */
  address(): Uint8Array;
  connect(rank: number, address: Uint8Array): void;
  /** Sends the outbox's first `length` bytes (at most inlineBytes: a frame) to `rank`; the outbox may be reused at once. */
  sendOut(rank: number, length: number): void;
  /**
   * Sends the parts of one frame, each a message, those after the first with `key` (0: none; see
   * expect) or `deferred` (see receiveHeld); true when they may be reused at once, else a SENT
   * record tells `token` later.
   */
  send(rank: number, parts: readonly Uint8Array[], token: number, key: number, deferred: boolean): boolean;
  /** The part from `rank` sent with `key` is received straight into `buffer` if it has its length (takeHeld then gives `buffer` as that part). */
  expect(rank: number, key: number, buffer: Uint8Array): void;
  /**
   * Receives the deferred part of the frame takeHeld() gave last (as its length) into `buffer` if
   * it has that length (else into new memory), progressing the worker until it is in; returns the
   * part (`buffer`, or an ArrayBuffer). Throws if UCX fails it, or if it is not in within
   * `timeoutMs` (its sender stopped: UCX keeps the part and lets it go once done).
   */
  receiveHeld(buffer: Uint8Array | undefined, timeoutMs: number): ArrayBuffer | Uint8Array;
  /**
   * Advances the worker (once, or until it is idle when `drain`) and writes what completed into the
   * inbox; returns how many events and records that was (0: nothing).
   */
  progress(drain: boolean): number;
  /** The frame of the oldest HELD record not taken yet: its only part, or its parts (an expected one as its buffer, a deferred one as its length). */
  takeHeld(): ArrayBuffer | HeldPart[];
  /** Calls the constructor's wake() from the event loop once there is something to progress. */
  arm(): void;
  /** Whether sends or receives are in flight or records wait for room (then the worker needs polling: not every transport wakes a waiting sender). */
  busy(): boolean;
  /** Whether UCX still sends something of ours (frames of the outbox's among them, which no SENT record tells). */
  sending(): boolean;
  /** UCX's description of the endpoint to `rank`: its lanes and their transports. */
  lanes(rank: number): string | undefined;
  disconnect(rank: number): void;
  close(): void;
}

export interface UcxNative {
  /**
   * new UcxWorker(rank, wake, inbox, outbox, settings): one UCP context and worker; `rank` tags what
   * it sends; inbox and outbox as above; `settings` override UCX's configuration (names without
   * "UCX_", e.g. { NET_DEVICES: 'lo' }).
   */
  UcxWorker: new (rank: number, wake: () => void, inbox: ArrayBuffer, outbox: ArrayBuffer, settings: Readonly<Record<string, string>>) => UcxWorker;
  /** UCX's version. */
  version: string;
  /** The largest frame that sendOut takes and that arrives in the inbox. */
  inlineBytes: number;
  /** UCX's words for a status code. */
  statusText(status: number): string;
}

/** How to get the device, said wherever it is missing. */
export const UCX_HOW_TO =
  "install UCX's headers (apt-get install libucx-dev) and rebuild the addon (npm rebuild ccjs), with CCJS_NO_UCX unset";

let loaded: UcxNative | string | undefined;

const ADDON = new URL('../../../build/Release/ccjs_ucx.node', import.meta.url);

/**
 * Why the addon cannot be had, without loading it (undefined: it is built and allowed). UCX is
 * loaded only into processes that use it: its library hooks do not belong in the others.
 */
export function ucxMissing(): string | undefined {
  if (process.env.CCJS_NO_UCX === '1') return `the UCX device is switched off (CCJS_NO_UCX=1); to use it, ${UCX_HOW_TO}`;
  if (!fs.existsSync(ADDON)) return `the UCX addon is not built; to build it, ${UCX_HOW_TO}`;
  // Frames pass through the inbox and outbox as words of this host's byte order, on the wire as little-endian ones.
  if (os.endianness() !== 'LE') return 'the UCX device needs a little-endian host';
  return undefined;
}

/** The addon, or why it cannot be had. */
export function ucxNative(): UcxNative | string {
  if (loaded !== undefined) return loaded;
  const missing = ucxMissing();
  if (missing !== undefined) {
    loaded = missing;
    return loaded;
  }
  // Read by UCX when the addon loads. Its memory hooks (malloc, mmap) and its SIGSEGV handler fight
  // V8's heap and Node's own handlers (crashes in V8's GC were seen with them on): off unless the
  // user set them. (Without memory events UCX registers InfiniBand memory without its cache.)
  process.env.UCX_MEM_MALLOC_HOOKS ??= 'no';
  process.env.UCX_MEM_EVENTS ??= 'no';
  process.env.UCX_ERROR_SIGNALS ??= '';
  try {
    loaded = createRequire(import.meta.url)(fileURLToPath(ADDON)) as UcxNative;
  } catch (error) {
    loaded = `the UCX addon is not built (${(error as Error).message.split('\n')[0]}); to build it, ${UCX_HOW_TO}`;
  }
  return loaded;
}
