/**
 * The UCX addon (native/ucx.cc), when it is built: a UCP worker per endpoint moving whole frames.
 * It is built during npm install when UCX's headers are there (libucx-dev); CCJS_NO_UCX=1 acts as
 * if it were not (to test the fallback), at install and at run time.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** What progress() reports: flat triples [kind, rank, value]. */
export const UCX_RECEIVED = 1;
export const UCX_SENT = 2;
export const UCX_LOST = 3;

export interface UcxWorker {
  /** This worker's address, for peers to connect to. */
  address(): Uint8Array;
  connect(rank: number, address: Uint8Array): void;
  /** Sends the parts of one frame, each a message; true when they may be reused at once, else progress() reports [SENT, rank, token]. */
  send(rank: number, parts: readonly Uint8Array[], token: number): boolean;
  /**
   * Advances the worker: what completed as [kind, rank, value, ...] (RECEIVED: a frame's only part
   * as an ArrayBuffer or its parts as an array of them, or UCX's error; SENT: the token; LOST:
   * UCX's reason), or how many events it processed.
   */
  progress(): (number | string | ArrayBuffer | ArrayBuffer[])[] | number;
  /** Calls the constructor's wake() from the event loop once there is something to progress. */
  arm(): void;
  /** Whether sends or receives are in flight (then the worker needs polling: not every transport wakes a waiting sender). */
  busy(): boolean;
  /** UCX's description of the endpoint to `rank`: its lanes and their transports. */
  lanes(rank: number): string | undefined;
  disconnect(rank: number): void;
  close(): void;
}

export interface UcxNative {
  /** new UcxWorker(rank, wake): one UCP context and worker; `rank` tags what it sends. */
  UcxWorker: new (rank: number, wake: () => void) => UcxWorker;
  /** UCX's version. */
  version: string;
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
