/**
 * Endpoints in worker threads (`ccjrun --threads T`, option `threads`, CCJS_THREADS under any
 * launcher): the main thread's ColGroupMaster.create() starts T − 1 worker threads that run the
 * same script with the same arguments, each creating its own master. A thread that fails ends its
 * whole process with its exit code, as a failing process ends a job; its output is prefixed with
 * its endpoint rank.
 */
import { Worker, isMainThread, workerData } from 'node:worker_threads';
import path from 'node:path';
import { forwardInto, linePrefixer, MARKER_END, MARKER_START } from './output.js';
import { ConfigError } from '../base/errors.js';
import { threadMemoryBytes } from '../../transport/shm/layout.js';
import type { ThreadMemory } from '../../transport/shm/layout.js';

interface ThreadData {
  readonly ccjsThreadRank: number;
  readonly ccjsThreadMemory: ThreadMemory;
  /** host:port of the job's coordinator, as the main thread found it. */
  readonly ccjsCoordinator: string;
}

const data = isMainThread ? null : (workerData as Partial<ThreadData> | null);
let memory: ThreadMemory | undefined = data?.ccjsThreadMemory;
/** How long an ending endpoint waits for its last words (and its threads') to be forwarded. */
const LAST_WORDS_MS = 1000;
/** Each started worker thread's end: it exited and its output was forwarded. */
const workersEnded: Promise<void>[] = [];
/** The exit code of the first worker thread that failed on its own (not because the job was aborted elsewhere). */
let workerFailure: number | undefined;

/** This thread's rank among its process's endpoints: 0 on the main thread, 1.. in threads started by ccjs. */
export function threadRankOfThisThread(): number {
  return typeof data?.ccjsThreadRank === 'number' ? data.ccjsThreadRank : 0;
}

/** The coordinator's host:port that this worker thread's main thread found, if this is one. */
export function coordinatorOfThisThread(): string | undefined {
  return typeof data?.ccjsCoordinator === 'string' ? data.ccjsCoordinator : undefined;
}

/** The rings of this process's threads, when ccjs started them. */
export function threadMemory(): ThreadMemory | undefined {
  return memory;
}

/**
 * Starts worker threads 1..threadCount−1 running this process's script, with the memory for their
 * rings (rings of `ringCapacity` bytes) and the coordinator's address. `endpointRank(t)` names each
 * thread in its output; `markers` makes the prefix a marker for ccjrun instead of "[rank] ".
 */
export function startWorkerThreads(threadCount: number, ringCapacity: number, coordinator: string, endpointRank: (threadRank: number) => number, markers: boolean): void {
  const script = process.argv[1];
  if (script === undefined) throw new ConfigError('threads: no script to run in the worker threads (process.argv[1] is empty)');
  memory = { buffer: new SharedArrayBuffer(threadMemoryBytes(threadCount, ringCapacity)), ringCapacity };
  for (let threadRank = 1; threadRank < threadCount; threadRank += 1) {
    const rank = endpointRank(threadRank);
    const worker = new Worker(path.resolve(script), {
      argv: process.argv.slice(2),
      workerData: { ccjsThreadRank: threadRank, ccjsThreadMemory: memory, ccjsCoordinator: coordinator } satisfies ThreadData,
      stdout: true,
      stderr: true,
    });
    const prefix = markers ? `${MARKER_START}${rank}${MARKER_END}` : `[${rank}] `;
    const drained = [worker.stdout, worker.stderr].map((stream, index) => {
      const output = stream.pipe(linePrefixer(prefix));
      forwardInto(output, index === 0 ? process.stdout : process.stderr);
      return new Promise<void>((resolve) => output.once('end', resolve));
    });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const ended = Promise.all([exited, ...drained]).then(() => undefined);
    workersEnded.push(ended);
    worker.on('error', (error) => {
      process.stderr.write(`ccjs: thread ${threadRank} (endpoint ${rank}) failed: ${error.stack ?? error.message}\n`);
      process.exit(1);
    });
    // A thread's exit code is the process's, as a process's is the job's (in a worker,
    // process.exit ends only the thread). Its last words are forwarded first. A thread stopping
    // because the job was aborted waits for its siblings: the one that failed, if it is one of
    // them, gives the process its code.
    worker.on('exit', (code) => {
      if (code === 0) return;
      if (code !== EXIT_ABORTED_ELSEWHERE) {
        workerFailure ??= code;
        void within(ended, LAST_WORDS_MS).then(() => process.exit(code));
      } else {
        void within(Promise.all(workersEnded), LAST_WORDS_MS).then(() => process.exit(workerFailure ?? code));
      }
    });
  }
}

/** Resolves once every worker thread started here has exited (at once when there are none). */
export async function workerThreadsEnded(): Promise<void> {
  await Promise.all(workersEnded);
}

/**
 * The exit code of a process that stops because the job was aborted elsewhere (not because one
 * of its own members failed, which exits with 1), so that launchers can name the process where
 * the failure started rather than whichever exited first.
 */
export const EXIT_ABORTED_ELSEWHERE = 98;

/** Writes to stderr; the promise settles once the text is taken (by the main thread, in a worker). */
export function writeStderr(text: string): Promise<void> {
  return new Promise((resolve) => process.stderr.write(text, () => resolve()));
}

/**
 * Ends this endpoint with `code` once `lastWords` (from writeStderr) are out: process.exit in a
 * worker thread would drop what its main thread has not taken yet. A main thread with worker
 * threads lets them end first (they are stopping too when the job aborts) so that their last
 * words reach stderr. Each wait lasts at most LAST_WORDS_MS.
 */
export async function exitEndpoint(code: number, lastWords: Promise<void>): Promise<never> {
  await within(lastWords, LAST_WORDS_MS);
  if (isMainThread && workersEnded.length > 0) await within(Promise.all(workersEnded), LAST_WORDS_MS);
  process.exit(code === EXIT_ABORTED_ELSEWHERE ? (workerFailure ?? code) : code);
}

/** Settles with `promise`, or after `ms` if it takes longer (the timer keeps the process alive until then). */
function within(promise: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);
}
