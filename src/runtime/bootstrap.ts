/**
 * How an endpoint joins its job: it resolves its configuration and its place in the job, checks
 * the device rules, opens its trace file, finds the job's secret, and (endpoint 0) starts the
 * coordinator and process 0's heartbeat server; then it finds the coordinator, starts the
 * process's worker threads, says hello, and follows the heartbeats. What joining started is
 * released if it fails.
 */
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { ConfigError, TimeoutError } from '../base/errors.js';
import type { Engine } from '../engine/engine.js';
import type { PairChoice, World } from '../engine/endpoints.js';
import { resolveSecret } from '../security/secret.js';
import { resolveConfig } from './config.js';
import type { Config, MasterOptions } from './config.js';
import type { Hello } from './control-channel.js';
import { Coordinator } from './coordinator.js';
import type { CoordinatorClient } from './coordinator-client.js';
import { planDevices } from './devices.js';
import type { DeviceSite, OpenDevices } from './devices.js';
import { HeartbeatThread, heartbeatAddress } from './heartbeat.js';
import type { HeartbeatAddress } from './heartbeat.js';
import { isLoopback, parseHostPort } from './launch.js';
import { COORDINATOR_ANNOUNCEMENT } from './output.js';
import { bindHost, hostIdentity, listenHost, place } from './placement.js';
import type { Address } from './placement.js';
import { startWorkerThreads } from './threads.js';
import { TraceFile } from './trace-file.js';

/** What an endpoint knows and has started before it joins its job. */
export interface Bootstrap extends DeviceSite {
  /** The timeline this endpoint writes (CCJS_TRACE_FILE). */
  readonly traceFile: TraceFile | undefined;
  /** Where endpoint 0 starts the coordinator (port 0: any free port); its host also decides whether the job is exposed. */
  readonly coordinatorBinding: Address;
  /** The job's coordinator, hosted by endpoint 0. */
  readonly coordinator: Coordinator | undefined;
  /** Process 0's heartbeat thread, which serves the other processes'. */
  readonly heartbeatServer: { readonly thread: HeartbeatThread; readonly address: HeartbeatAddress } | undefined;
}

/** An endpoint that joined its job: what its master holds. */
export interface Joined {
  readonly config: Config;
  /** The job's endpoints. */
  readonly world: World;
  /** This endpoint's rank in the job (process-major, then thread). */
  readonly rank: number;
  /** No launcher started this process (see Placement.unlaunched). */
  readonly unlaunched: boolean;
  /** "process 2", or "endpoint 5 (process 2, thread 1)" in a job with threads. */
  readonly label: string;
  readonly engine: Engine;
  /** The device that serves each peer endpoint. */
  readonly choices: readonly PairChoice[];
  readonly client: CoordinatorClient;
  readonly coordinator: Coordinator | undefined;
  readonly traceFile: TraceFile | undefined;
  /** This process's heartbeat thread, held by its main thread. */
  readonly heartbeat: HeartbeatThread | undefined;
  /** Stops listening to the heartbeat thread's verdicts. */
  readonly stopListening: (() => void) | undefined;
}

/**
 * Reads `options`, the `CCJS_*` environment, the config file and the launcher's environment;
 * endpoint 0 starts the coordinator (publishing its address where the launcher asked) and, in a
 * job of several processes, the heartbeat server.
 */
export async function bootstrap(options: MasterOptions): Promise<Bootstrap> {
  const config = resolveConfig(options);
  const placement = place(options, config);
  const { processRank, processCount, threadRank, threadCount } = placement;
  const rank = processRank * threadCount + threadRank;
  const size = processCount * threadCount;
  const devicePlan = planDevices(config, size);
  const identity = hostIdentity(config);
  // Opened before anything is started, so that a trace file it cannot write leaves nothing behind.
  const traceFile = config.traceFile === undefined ? undefined : new TraceFile(config.traceFile, { rank, size, processRank, threadRank, host: identity.name });
  const dataHost = listenHost(config, placement.allLocal);
  const coordinatorBinding =
    'file' in placement.coordinator ? { host: dataHost, port: 0 } : { host: bindHost(placement.coordinator.host, dataHost), port: placement.coordinator.port };
  // Without a secret of its own, only a job that stays on loopback may start (with a derived one).
  const exposed = [coordinatorBinding.host, ...(size > 1 ? [dataHost] : [])].find((host) => !isLoopback(host));
  const secret = resolveSecret(process.env, placement.jobKey, exposed);
  const coordinator = rank === 0 ? await Coordinator.start(coordinatorBinding.host, coordinatorBinding.port, processCount, threadCount, placement.jobKey, secret, config.timeoutMs) : undefined;
  if (coordinator && 'file' in placement.coordinator) publishAddress(placement.coordinator.file, { host: coordinatorBinding.host, port: coordinator.port });
  // Process 0's heartbeat thread serves the other processes' (heartbeat.ts); its address goes out with the hello.
  const heartbeatServer = coordinator && processCount > 1 ? await HeartbeatThread.serve(dataHost, processCount, config.timeoutMs, coordinator.jobId, secret) : undefined;
  return { config, placement, rank, size, identity, devicePlan, traceFile, dataHost, coordinatorBinding, secret, coordinator, heartbeatServer };
}

/** Where the coordinator is: endpoint 0's own, the configured one, or the one process 0 published (waited for). */
export async function coordinatorAddress(boot: Bootstrap): Promise<Address> {
  const { placement, coordinator, coordinatorBinding } = boot;
  if (!('file' in placement.coordinator)) return { host: placement.coordinator.host, port: coordinator?.port ?? placement.coordinator.port };
  return coordinator ? { host: coordinatorBinding.host, port: coordinator.port } : readPublishedAddress(placement.coordinator.file, boot.config.timeoutMs);
}

/** A process's main thread starts its worker threads (`threads`), which find the coordinator at `address`. */
export function startThreads(boot: Bootstrap, address: Address): void {
  const { processRank, threadRank, threadCount } = boot.placement;
  if (threadRank !== 0 || threadCount <= 1 || !isMainThread) return;
  const where = `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  startWorkerThreads(threadCount, boot.config.shmRingBytes, where, (thread) => processRank * threadCount + thread, process.env.CCJS_OUTPUT_MARKERS === '1');
}

/** What this endpoint tells the coordinator of itself: where it is, and the addresses of its devices and heartbeat server. */
export function helloOf(boot: Bootstrap, devices: OpenDevices): Hello {
  const { placement, identity, heartbeatServer } = boot;
  const { tcp, shm, ucx } = devices;
  return {
    processRank: placement.processRank,
    processCount: placement.processCount,
    threadRank: placement.threadRank,
    threadCount: placement.threadCount,
    jobKey: placement.jobKey,
    host: identity.id,
    hostname: identity.name,
    machine: identity.machine,
    pid: process.pid,
    receiveWindow: boot.config.receiveWindow,
    addresses: tcp && shm ? { tcp: tcp.address, shm: shm.address, ...(ucx ? { ucx: ucx.address } : {}), ...(heartbeatServer ? { heartbeat: heartbeatServer.address } : {}) } : {},
  };
}

/**
 * Once the job's endpoints are known (`world`), process 0's heartbeat thread starts serving and
 * the other processes' main threads start theirs; returns this process's thread, if this thread holds it.
 */
export function followHeartbeats(boot: Bootstrap, world: World): HeartbeatThread | undefined {
  const { config, placement, secret, heartbeatServer } = boot;
  heartbeatServer?.thread.worldFormed();
  if (placement.processRank === 0 || placement.threadRank !== 0) return heartbeatServer?.thread;
  return HeartbeatThread.join(heartbeatAddress(world.endpoints[0]?.addresses.heartbeat), placement.processRank, placement.processCount, config.timeoutMs, world.jobId, secret);
}

/** Joining failed with `error`: releases the trace file, the devices, the coordinator and the heartbeats. */
export async function abandonJoin(boot: Bootstrap, devices: OpenDevices, heartbeat: HeartbeatThread | undefined, stopListening: (() => void) | undefined, error: unknown): Promise<void> {
  boot.traceFile?.close();
  stopListening?.();
  await Promise.allSettled([devices.tcp?.close(), devices.shm?.close(), devices.ucx?.close(), boot.coordinator?.forceClose(error), heartbeat?.stop()]);
}

/** Writes `host:port` to `file` atomically, so a reader never sees half of it; `-` announces it on stdout to the launcher. */
function publishAddress(file: string, address: Address): void {
  const text = `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
  if (file === '-') {
    process.stdout.write(`${COORDINATOR_ANNOUNCEMENT}${text}\n`);
    return;
  }
  const partial = `${file}.${process.pid}.partial`;
  fs.writeFileSync(partial, text);
  fs.renameSync(partial, file);
}

/** Waits (polling, bounded by `timeoutMs`) for process 0 to publish its coordinator's address. */
async function readPublishedAddress(file: string, timeoutMs: number): Promise<Address> {
  if (file === '-') throw new ConfigError('CCJS_COORDINATOR=file:- makes process 0 announce its coordinator to the launcher; the other processes need its host:port');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return parseHostPort(`coordinator file ${file}`, fs.readFileSync(file, 'utf8').trim());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (Date.now() > deadline) throw new TimeoutError(`process 0 did not publish its coordinator address in ${file} within ${timeoutMs} ms; is it running?`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
