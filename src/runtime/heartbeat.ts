/**
 * Liveness that does not depend on the event loop: one heartbeat thread per process (the thread's
 * code is src/runtime/heartbeat-thread.ts), started by the main thread's master. Process 0's thread serves
 * on a port of its own, advertised in its hello as address record `heartbeat`; every other
 * process's thread connects to it. Each thread tells the endpoints of its process (its main thread
 * and its ccjs worker threads) which process was lost, on a BroadcastChannel named after the job
 * and the process.
 */
import { BroadcastChannel, Worker } from 'node:worker_threads';
import { TransportError } from '../base/errors.js';

/** What a heartbeat thread is started with. */
export interface HeartbeatSettings {
  readonly role: 'server' | 'client';
  /** Where the server listens (server), or where it is (client). */
  readonly host: string;
  readonly port: number;
  readonly processRank: number;
  readonly processCount: number;
  /** Silence after which the other side is declared lost. */
  readonly timeoutMs: number;
  readonly periodMs: number;
  /** The job secret (hex): heartbeat connections authenticate like every other (src/security/handshake.ts). */
  readonly secret: string;
  /** The BroadcastChannel on which the thread tells its process's endpoints of losses. */
  readonly channel: string;
}

/** A heartbeat thread's verdict, as its process's endpoints receive it. */
export interface LossNotice {
  readonly processRank: number;
  /** Why, for people ("no heartbeat from it for 2000 ms"). */
  readonly reason: string;
}

/** What a heartbeat thread reports to the thread that started it. */
export type ThreadReport = { readonly type: 'listening'; readonly port: number } | { readonly type: 'failed'; readonly message: string };

/** What the main thread tells its heartbeat thread: the world formed (process 0), or stop. */
export type ThreadOrder = 'world' | 'stop';

/** Where process 0's heartbeat thread listens: its address record `heartbeat`. */
export interface HeartbeatAddress {
  readonly host: string;
  readonly port: number;
}

/** How long a stopping thread may take to say goodbye before it is terminated. */
const STOP_MS = 1000;

/** A beat every fifth of the timeout, at least every second and at most every 50 ms. */
export function heartbeatPeriod(timeoutMs: number): number {
  return Math.min(1000, Math.max(50, Math.round(timeoutMs / 5)));
}

function channelName(jobId: string, processRank: number): string {
  return `ccjs heartbeats of job ${jobId}, process ${processRank}`;
}

/** The heartbeat thread of this process, as its main thread holds it. */
export class HeartbeatThread {
  private stopping: Promise<void> | undefined;

  private constructor(private readonly worker: Worker) {}

  /** Process 0: starts the thread that serves on `host`; resolves with it and its address. */
  static async serve(host: string, processCount: number, timeoutMs: number, jobId: string, secret: Buffer): Promise<{ thread: HeartbeatThread; address: HeartbeatAddress }> {
    const worker = start({ role: 'server', host, port: 0, processRank: 0, processCount, timeoutMs, periodMs: heartbeatPeriod(timeoutMs), secret: secret.toString('hex'), channel: channelName(jobId, 0) });
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', (report: ThreadReport) => (report.type === 'listening' ? resolve(report.port) : reject(new TransportError(report.message))));
      worker.once('error', reject);
    });
    return { thread: new HeartbeatThread(worker), address: { host, port } };
  }

  /** Every other process: starts the thread that beats with process 0's at `address`. */
  static join(address: HeartbeatAddress, processRank: number, processCount: number, timeoutMs: number, jobId: string, secret: Buffer): HeartbeatThread {
    return new HeartbeatThread(start({ role: 'client', host: address.host, port: address.port, processRank, processCount, timeoutMs, periodMs: heartbeatPeriod(timeoutMs), secret: secret.toString('hex'), channel: channelName(jobId, processRank) }));
  }

  /** Process 0: every process has the world now, so each must connect within timeoutMs. */
  worldFormed(): void {
    this.worker.postMessage('world' satisfies ThreadOrder);
  }

  /** Says goodbye (so that this process is not declared lost) and ends the thread; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      // Held until the goodbye is out: an ending process would otherwise take the thread with it.
      this.worker.ref();
      const timer = setTimeout(() => void this.worker.terminate(), STOP_MS);
      this.worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.worker.postMessage('stop' satisfies ThreadOrder);
    });
    return this.stopping;
  }
}

function start(settings: HeartbeatSettings): Worker {
  const worker = new Worker(new URL('./heartbeat-thread.js', import.meta.url), { workerData: settings });
  // (What a thread throws need not be an Error: it is said as it is, not as "undefined".)
  worker.on('error', (error: unknown) => process.stderr.write(`ccjs: the heartbeat thread of process ${settings.processRank} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`));
  // A finished process ends, whatever its heartbeat thread does.
  worker.unref();
  return worker;
}

/** Reads process 0's `heartbeat` address record (from the world). */
export function heartbeatAddress(record: unknown): HeartbeatAddress {
  if (typeof record === 'object' && record !== null && 'host' in record && 'port' in record && typeof record.host === 'string' && typeof record.port === 'number') {
    return { host: record.host, port: record.port };
  }
  throw new TransportError('process 0 advertised no heartbeat address (address record `heartbeat`); do all processes run the same version of ccjs?');
}

/**
 * Calls `listener` for each loss the heartbeat thread of process `processRank` declares (every
 * endpoint of the process listens). Returns what stops listening.
 */
export function listenForLosses(jobId: string, processRank: number, listener: (notice: LossNotice) => void): () => void {
  const channel = new BroadcastChannel(channelName(jobId, processRank));
  channel.onmessage = (event) => {
    listener((event as { data: LossNotice }).data);
  };
  channel.unref();
  return () => channel.close();
}
