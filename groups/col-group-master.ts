/**
 * One per endpoint (a process, or one of its worker threads): reads the configuration and the
 * launcher's environment, registers the endpoint with the coordinator, chooses a device per peer,
 * connects them under one messaging engine, and builds groups in CCJ's two phases: addMember,
 * then getGroup(name, n).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { EventEmitter } from 'eventemitter3';
import { ColGroup } from './col-group.js';
import { InactiveGroup } from './inactive-group.js';
import { splitGroup } from './split.js';
import { Coordinator } from '../src/runtime/coordinator.js';
import { CoordinatorClient } from '../src/runtime/coordinator-client.js';
import type { Hello } from '../src/runtime/control-channel.js';
import { ColMember, memberCore } from './col-member.js';
import type { MemberCore } from './col-member.js';
import { resolveConfig } from '../src/runtime/config.js';
import type { Config, MasterOptions, TraceListener } from '../src/runtime/config.js';
import { detectLaunch, isLoopback, parseHostPort } from '../src/runtime/launch.js';
import { createSerializer } from '../src/serialization/index.js';
import type { Serializer } from '../src/serialization/serializer.js';
import { AbortError, ConfigError, GroupError, PeerLostError, TimeoutError } from '../src/base/errors.js';
import { Engine } from '../src/engine/engine.js';
import type { MessageCounts, PeerPlan } from '../src/engine/engine.js';
import { progressEngine } from '../src/engine/progress.js';
import { chooseDevices, describeDevices, endpointLabel } from '../src/engine/endpoints.js';
import type { DeviceRules, PairChoice, Unavailable, World } from '../src/engine/endpoints.js';
import { ShmDevice } from '../transport/shm/shm-device.js';
import { shmNative } from '../transport/shm/native.js';
import { UcxDevice } from '../transport/ucx/ucx-device.js';
import { ucxMissing, ucxNative } from '../transport/ucx/native.js';
import type { Device, DeviceName } from '../transport/device.js';
import { LocalDevice } from '../transport/local/local-device.js';
import { TcpDevice } from '../transport/tcp/tcp-device.js';
import { Selector } from '../src/collectives/selection.js';
import { TraceFile } from '../src/runtime/trace-file.js';
import { COORDINATOR_ANNOUNCEMENT } from '../src/runtime/output.js';
import { resolveSecret } from '../src/security/secret.js';
import { EXIT_ABORTED_ELSEWHERE, coordinatorOfThisThread, exitEndpoint, startWorkerThreads, writeStderr, threadMemory, threadRankOfThisThread, workerThreadsEnded } from '../src/runtime/threads.js';
import { HeartbeatThread, heartbeatAddress, listenForLosses } from '../src/runtime/heartbeat.js';
import type { LossNotice } from '../src/runtime/heartbeat.js';

interface Address {
  readonly host: string;
  readonly port: number;
}

interface Placement {
  readonly processRank: number;
  readonly processCount: number;
  readonly threadRank: number;
  readonly threadCount: number;
  /** Where endpoint 0's coordinator listens, or the file in which it publishes its address. */
  readonly coordinator: Address | { readonly file: string };
  readonly allLocal: boolean;
  readonly jobKey: string;
}

/** What this endpoint's devices cannot serve: shared memory between processes and UCX need their addons. */
function unavailability(ucx: UcxDevice | undefined, ucxUnbuilt: string | undefined): Unavailable {
  const native = shmNative();
  return (device, relation) => {
    if (device === 'ucx' && ucx === undefined) return { reason: ucxUnbuilt ?? 'no pair of this job was to use it (UCX serves other hosts unless asked for)', loud: false };
    if (device === 'shm' && relation !== 'threads' && typeof native === 'string') return { reason: native, loud: true };
    return undefined;
  };
}

/** Notes of the device table, said once per process. */
const told = new Set<string>();

/** A peer endpoint was lost: its process died, its connection closed without close(), or its process's heartbeats stopped for timeoutMs. */
export interface PeerLostEvent {
  /** The lost endpoint's process. */
  readonly process: number;
  /** The lost endpoint ({@link ColGroupMaster.rank} there). */
  readonly endpoint: number;
  /** Why it counts as lost, for people. */
  readonly reason: string;
}

/** The job is being aborted: an exception escaped a member's run() at `origin`, here or elsewhere. */
export interface AbortEvent {
  /** What failed, naming the member. */
  readonly message: string;
  /** The endpoint whose member failed. */
  readonly origin: number;
}

/** A getGroup of this endpoint resolved: the group is active. */
export interface GroupFormedEvent {
  /** The group's name. */
  readonly name: string;
  /** Its number of members, job-wide. */
  readonly size: number;
  /** The active group. */
  readonly group: ColGroup;
  /** Group ranks of this endpoint's members, in addMember order. */
  readonly ranks: readonly number[];
}

/**
 * What a master tells its listeners (`master.on('peerLost', ...)`). Listeners run synchronously;
 * one that throws is reported on stderr and does not disturb the job.
 */
export interface MasterEvents {
  /** A peer endpoint was lost; calls on every group that contains it reject with {@link PeerLostError}. */
  peerLost: (event: PeerLostEvent) => void;
  /** The job is being aborted. */
  abort: (event: AbortEvent) => void;
  /** A group became active here. */
  groupFormed: (event: GroupFormedEvent) => void;
  /** A line of what CCJS_TRACE reports (the algorithm of each collective call), when tracing is on. */
  trace: (line: string) => void;
  /** The master closed: its members are done and its resources released. */
  close: () => void;
}

/**
 * One endpoint of a job: a process, or one of its worker threads under `--threads`. Every process
 * (or thread) creates exactly one with {@link ColGroupMaster.create}, adds its members to groups
 * ({@link ColGroupMaster.addMember}), and each member then asks for the active group
 * ({@link ColGroupMaster.getGroup}). When every member added here is done, the master closes by
 * itself (option `autoClose`). It is an event emitter of {@link MasterEvents} (`master.on('peerLost', ...)`).
 *
 * @example
 * ```ts
 * const master = await ColGroupMaster.create();
 * const member = new Worker(master);          // a ColMember subclass
 * master.addMember('workers', member);         // phase 1
 * await member.start();                        // run() calls master.getGroup('workers', n): phase 2
 * ```
 */
export class ColGroupMaster extends EventEmitter<MasterEvents> {
  private readonly members: ColMember[] = [];
  private readonly joined = new Map<string, Set<ColMember>>();
  private readonly groupRequests = new Map<string, { size: number; group: Promise<ColGroup> }>();
  private joinCount = 0;
  private closing: Promise<void> | undefined;
  private allDone: (() => void) | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private dumped = false;
  /** This endpoint is ending the job's way (abortOnError): later failures are echoes of the first. */
  private stopping = false;
  private liftSpinningVeto: (() => void) | undefined;
  /** Endpoints whose loss the listeners were told of, by whichever noticed it first: the coordinator or a device. */
  private readonly lostPeers = new Set<number>();

  private constructor(
    /** @internal The resolved configuration. */
    readonly config: Config,
    private readonly world: World,
    /** This endpoint's rank in the job (process-major, then thread). */
    readonly rank: number,
    /** @internal */ readonly engine: Engine,
    /** @internal */ readonly serializer: Serializer,
    /** @internal Chooses each collective call's algorithm. */ readonly selector: Selector,
    private readonly devices: readonly PairChoice[],
    private readonly client: CoordinatorClient,
    private readonly coordinator: Coordinator | undefined,
    /** @internal The timeline this endpoint writes (CCJS_TRACE_FILE). */ readonly traceFile: TraceFile | undefined,
    /** This process's heartbeat thread, held by its main thread. */
    private readonly heartbeat: HeartbeatThread | undefined,
    /** Stops listening to the heartbeat thread's verdicts. */
    private readonly stopListening: (() => void) | undefined,
  ) {
    super();
    engine.onLost = (peer, error) => this.tellLost(peer, error.message);
  }

  /**
   * Connects this endpoint to the job: reads `options`, then the `CCJS_*` environment variables,
   * then the config file (`ccjs.config.json` in the working directory, or `CCJS_CONFIG`), and the
   * launcher's environment (ccjrun, mpirun, hydra, srun, torch-style variables); registers with the
   * coordinator (endpoint 0 hosts it) and connects a device to every peer endpoint.
   *
   * @param options - overrides the environment and the config file; see {@link MasterOptions}.
   * @returns the master of this endpoint, once every peer endpoint is connected.
   * @throws {@link ConfigError} for an unknown option or a bad value (naming it), or a device that cannot be used.
   * @throws {@link TimeoutError} when the coordinator or a peer cannot be reached within `timeoutMs`.
   */
  static async create(options: MasterOptions = {}): Promise<ColGroupMaster> {
    const config = resolveConfig(options);
    const placement = place(options, config);
    const { processRank, processCount, threadRank, threadCount } = placement;
    const rank = processRank * threadCount + threadRank;
    const size = processCount * threadCount;
    if (config.transport === 'local' && size > 1) {
      throw new ConfigError(`transport 'local' connects members of one endpoint only, but this job has ${size} endpoints; use 'auto' or 'tcp'`);
    }
    const rules = deviceRules(config);
    const ucxAsked = Object.entries(rules).filter(([, device]) => device === 'ucx');
    const ucxUnbuilt = ucxMissing();
    if (ucxAsked.length > 0 && ucxUnbuilt !== undefined) {
      throw new ConfigError(`transport 'ucx' was asked for (${ucxAsked.map(([relation]) => relation).join(', ')} pairs), but ${ucxUnbuilt}; or use 'auto' or 'tcp'`);
    }
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
    // Process 0's heartbeat thread serves the other processes' (src/runtime/heartbeat.ts); its address goes out with the hello.
    const heartbeatServer = coordinator && processCount > 1 ? await HeartbeatThread.serve(dataHost, processCount, config.timeoutMs, coordinator.jobId, secret) : undefined;
    let world: World | undefined;
    const tcp = size > 1 ? await TcpDevice.listen({ rank, listenHost: dataHost, timeoutMs: config.timeoutMs, jobId: () => world?.jobId, secret, tls: config.tls, trace: (line) => trace?.(line) }) : undefined;
    const native = shmNative();
    const shm =
      size > 1
        ? new ShmDevice({ rank, processRank, threadRank, threadCount, ringCapacity: config.shmRingBytes, singleCopy: config.shmSingleCopy, timeoutMs: config.timeoutMs, native: typeof native === 'string' ? undefined : native, threads: threadMemory })
        : undefined;
    let master: ColGroupMaster | undefined;
    // Trace lines go where the configuration says and, once the master exists, to its listeners.
    const printTrace = config.trace;
    const trace: TraceListener | undefined = printTrace && ((line) => {
      printTrace(line);
      master?.tell('trace', line);
    });
    // A UCP worker costs a context and a thread: made only where UCX may serve a pair.
    const ucxWanted = size > 1 && ucxUnbuilt === undefined && (ucxAsked.length > 0 || (rules.network === 'auto' && !placement.allLocal));
    const ucxAddon = ucxWanted ? ucxNative() : undefined;
    if (typeof ucxAddon === 'string') throw new ConfigError(`the UCX device cannot be used: ${ucxAddon}`);
    const ucx = ucxAddon ? new UcxDevice({ rank, host: identity.id, timeoutMs: config.timeoutMs, native: ucxAddon, trace }) : undefined;
    const events = {
      lost: (endpoint: number, message: string) => master?.peerLost(endpoint, message),
      abort: (endpoint: number, message: string) => master?.aborted(endpoint, message),
      dump: (endpoint: number) => master?.dump(`the watchdog of ${endpointLabel(endpoint, threadCount)} fired`),
    };
    const hello: Hello = {
      processRank,
      processCount,
      threadRank,
      threadCount,
      jobKey: placement.jobKey,
      host: identity.id,
      hostname: identity.name,
      machine: identity.machine,
      pid: process.pid,
      receiveWindow: config.receiveWindow,
      addresses: tcp && shm ? { tcp: tcp.address, shm: shm.address, ...(ucx ? { ucx: ucx.address } : {}), ...(heartbeatServer ? { heartbeat: heartbeatServer.address } : {}) } : {},
    };
    let heartbeat = heartbeatServer?.thread;
    let stopListening: (() => void) | undefined;
    let client: CoordinatorClient;
    let engine: Engine;
    let choices: PairChoice[];
    try {
      const address =
        'file' in placement.coordinator
          ? coordinator
            ? { host: coordinatorBinding.host, port: coordinator.port }
            : await readPublishedAddress(placement.coordinator.file, config.timeoutMs)
          : { host: placement.coordinator.host, port: coordinator?.port ?? placement.coordinator.port };
      if (threadRank === 0 && threadCount > 1 && isMainThread) {
        const where = `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
        startWorkerThreads(threadCount, config.shmRingBytes, where, (thread) => processRank * threadCount + thread, process.env.CCJS_OUTPUT_MARKERS === '1');
      }
      ({ client, world } = await CoordinatorClient.connect(address.host, address.port, hello, config.timeoutMs, events, secret));
      const known = world;
      if (processCount > 1) {
        stopListening = listenForLosses(known.jobId, processRank, (notice) => master?.processLost(notice));
        heartbeatServer?.thread.worldFormed();
        if (processRank !== 0 && threadRank === 0) heartbeat = HeartbeatThread.join(heartbeatAddress(known.endpoints[0]?.addresses.heartbeat), processRank, processCount, config.timeoutMs, known.jobId, secret);
      }
      choices = chooseDevices(known, rank, rules, unavailability(ucx, ucxUnbuilt));
      tellOnce(choices, threadRank);
      const local = new LocalDevice();
      const devices: Partial<Record<DeviceName, Device>> = { local, tcp, shm, ucx };
      const deviceOf = (name: DeviceName): Device => devices[name] as Device;
      const peers: PeerPlan[] = choices.map((choice) => ({ device: deviceOf(choice.device), window: known.endpoints[choice.peer]?.receiveWindow ?? config.receiveWindow, otherHost: choice.relation === 'network' }));
      engine = new Engine({ rank, eagerLimit: config.eagerLimit, sendBuffer: config.sendBuffer, timeoutMs: config.timeoutMs, processOf: (endpoint) => known.endpoints[endpoint]?.processRank ?? -1, labelOf: (endpoint) => endpointLabel(endpoint, threadCount) }, peers, Object.values(devices).filter((device): device is Device => device !== undefined));
      const served = (name: DeviceName) => choices.filter((choice) => choice.device === name).map((choice) => ({ rank: choice.peer, address: known.endpoints[choice.peer]?.addresses[name] }));
      await engine.connect((device) => served(device.name));
    } catch (error) {
      traceFile?.close();
      stopListening?.();
      await Promise.allSettled([tcp?.close(), shm?.close(), ucx?.close(), coordinator?.forceClose(error), heartbeat?.stop()]);
      throw error;
    }
    const serializer = createSerializer(config.serializer, { outOfBandThreshold: config.outOfBandThreshold, strict: config.strictSerialization });
    const selector = new Selector(config.collectives, config.algorithms, trace);
    master = new ColGroupMaster(config, world, rank, engine, serializer, selector, choices, client, coordinator, traceFile, heartbeat, stopListening);
    master.startProgress();
    trace?.(`ccjs trace: devices of ${master.describe()}`);
    return master;
  }

  /** Processes in the job. */
  get processCount(): number {
    return this.world.processCount;
  }

  /** This endpoint's process (0-based). */
  get processRank(): number {
    return Math.floor(this.rank / this.world.threadCount);
  }

  /** Endpoints in the job: processes × threads per process. */
  get size(): number {
    return this.world.endpoints.length;
  }

  /** 0 on a process's main thread, 1..threadCount−1 in its worker threads. */
  get threadRank(): number {
    return this.rank % this.world.threadCount;
  }

  /** Endpoints per process (the `threads` option, `--threads`, `CCJS_THREADS`). */
  get threadCount(): number {
    return this.world.threadCount;
  }

  /** This endpoint's host (CCJS_HOST, or the host name): endpoints on one host share memory. */
  get host(): string {
    return (this.world.endpoints[this.rank] as World['endpoints'][number]).hostname;
  }

  /** "process 2", or "endpoint 5 (process 2, thread 1)" in a job with threads. */
  get label(): string {
    return endpointLabel(this.rank, this.world.threadCount);
  }

  /** Which device serves which peer endpoint, one line each (also printed at start-up with CCJS_TRACE). */
  describe(): string {
    return describeDevices(this.world, this.rank, this.devices);
  }

  /**
   * Messages and bytes this endpoint sent since it started (point-to-point and collective, each
   * message once whatever its protocol), by device and by same host / other host. Take two and
   * subtract to count one call; sum over endpoints for a job.
   */
  messageCounts(): MessageCounts {
    return this.engine.counters();
  }

  /** Members the job is sized for (CCJ's name): processes × threads per process, the same as {@link ColGroupMaster.size}. */
  getNumberOfCpus(): number {
    return this.processCount * this.threadCount;
  }

  /**
   * Phase 1: `member` joins group `groupName`, creating it if new. A member may join several
   * groups; members of one endpoint are ranked in the order they were added.
   *
   * @throws {@link GroupError} if the group is already active here, or `member` joined it before.
   * @throws TypeError for an empty name or a `member` that is not a {@link ColMember}.
   */
  addMember(groupName: string, member: ColMember): void {
    if (typeof groupName !== 'string' || groupName === '') throw new TypeError(`addMember: group name must be a non-empty string, got ${JSON.stringify(groupName)}`);
    if (!(member instanceof ColMember)) throw new TypeError(`addMember: ${String(member)} is not a ColMember`);
    this.join(groupName, member, []);
  }

  /**
   * Phase 2: resolves with the active, immutable group once `numberOfMembers` members job-wide
   * have joined it. Ranks follow endpoint rank, then `addMember` order. Every member calls it;
   * calls with the same name in one endpoint share one result.
   *
   * @param numberOfMembers - members of the group in the whole job.
   * @throws {@link GroupError} (rejects) when members disagree on the count, too many join, or one joins too late.
   * @throws {@link TimeoutError} (rejects) when fewer members joined within `timeoutMs`, saying how many did.
   * @throws RangeError (rejects) unless `numberOfMembers` is a positive integer.
   */
  getGroup(groupName: string, numberOfMembers: number): Promise<ColGroup> {
    if (!Number.isInteger(numberOfMembers) || numberOfMembers < 1) {
      return Promise.reject(new RangeError(`getGroup('${groupName}', ${numberOfMembers}): the number of members must be a positive integer`));
    }
    const earlier = this.groupRequests.get(groupName);
    if (earlier) {
      if (earlier.size !== numberOfMembers) {
        return Promise.reject(new GroupError(`getGroup('${groupName}', ${numberOfMembers}) disagrees with getGroup('${groupName}', ${earlier.size}) called before in this process`));
      }
      return earlier.group;
    }
    const group = this.client.getGroup(groupName, numberOfMembers, this.config.timeoutMs).then((description) => {
      const endpoints = Int32Array.from(description.members, ([endpoint]) => endpoint);
      const route = this.engine.route(description.context, description.name, endpoints);
      const hosts = description.members.map(([endpoint]) => (this.world.endpoints[endpoint] as World['endpoints'][number]).host);
      const group = new ColGroup(description.name, description.context, description.members, this.rank, this.members, this.world.threadCount, route, hosts);
      const joined = [...(this.joined.get(groupName) ?? [])];
      for (const member of joined) {
        if (!group.has(member)) throw new GroupError(`${member.constructor.name} joined group '${groupName}' too late: the group was already active`);
      }
      this.tell('groupFormed', { name: group.name, size: group.size(), group, ranks: joined.map((member) => group.getRank(member)) });
      return group;
    });
    this.groupRequests.set(groupName, { size: numberOfMembers, group });
    return group;
  }

  /**
   * An inactive copy of `group` (CCJ's inactive groups): choose and order its members with
   * {@link InactiveGroup.include} or {@link InactiveGroup.exclude}, then every chosen member calls
   * {@link InactiveGroup.activate}.
   *
   * @throws TypeError for an empty `newName`.
   */
  copyGroup(group: ColGroup, newName: string): InactiveGroup {
    return new InactiveGroup(this, group, newName);
  }

  /**
   * Collective over `group` (MPI_Comm_split): members with the same `color` form a new group,
   * ranked by `key`, then by their rank in `group`. Every member of `group` calls it.
   *
   * @param color - a non-negative integer; members passing the same one end up together.
   * @param key - orders the members of the new group (default 0: by rank in `group`).
   * @throws RangeError (rejects) for a negative or non-integer color, or a non-integer key.
   */
  split(group: ColGroup, member: ColMember, color: number, key = 0): Promise<ColGroup> {
    return splitGroup(this, group, member, color, key);
  }

  /**
   * Waits until every started member of this endpoint is done, flushes what it sent, says goodbye
   * to the coordinator and releases this endpoint's sockets, rings and threads so the process can
   * exit. Called by itself when `autoClose` is on (the default); idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** @internal Joins with an explicit ordering key (copyGroup, split). */
  join(groupName: string, member: ColMember, key: number[]): void {
    if (this.client.activeGroups.has(groupName)) throw new GroupError(`cannot join group '${groupName}': it is already active`);
    const members = this.joined.get(groupName) ?? new Set<ColMember>();
    if (members.has(member)) throw new GroupError(`${member.constructor.name} has already joined group '${groupName}'`);
    memberCore(member).attach(this, this.members.length);
    if (!this.members.includes(member)) this.members.push(member);
    members.add(member);
    this.joined.set(groupName, members);
    this.client.join(groupName, memberCore(member).localId, this.joinCount++, key);
  }

  /** @internal */
  async memberDone(_member: ColMember): Promise<void> {
    if (!this.members.some((member) => memberCore(member).isRunning)) this.allDone?.();
    if (this.config.autoClose && this.members.every((member) => memberCore(member).finished)) await this.close();
  }

  /**
   * @internal run() returned: a call of the member still waiting means an await was forgotten.
   * Once named here, such a call failing later (its peer closing) is no unhandled rejection.
   */
  memberReturned(core: MemberCore): void {
    if (core.pendingCalls === 0) return;
    const calls = this.engine.pending(core);
    for (const call of calls) call.abandon();
    process.stderr.write(`ccjs: ${core.label} returned from run() with ${calls.length} call(s) still pending (a missing await?):${calls.map((call) => `\n  - ${call.details()}`).join('')}\n`);
  }

  /** @internal An exception escaped a member's run(): abort the job, naming the member. */
  async memberFailed(member: ColMember, error: unknown): Promise<void> {
    if (!this.config.abortOnError || this.stopping) return;
    this.stopping = true;
    const groups = [...this.joined].filter(([, members]) => members.has(member)).map(([name]) => name);
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const message = `${memberCore(member).label} (groups: ${groups.join(', ') || 'none'}) failed: ${detail}`;
    const written = writeStderr(`ccjs: aborting the job: ${message}\n`);
    this.tell('abort', { message, origin: this.rank });
    this.traceFile?.close();
    this.engine.leaveAfterLoss();
    // The coordinator's host tells the others itself: it may be gone before its own message came round.
    if (this.coordinator) this.coordinator.abort(this.rank, message);
    else this.client.abort(message, this.rank);
    await this.client.flush();
    // In a worker thread this ends the thread with code 1, which ends its process (src/runtime/threads.ts).
    await exitEndpoint(1, written);
  }

  /** Logs this endpoint's pending calls, once (the watchdog, here or elsewhere in the job, fired). */
  private dump(reason: string): void {
    if (this.dumped) return;
    this.dumped = true;
    const period = (this.config.watchdogMs ?? 0) / 4;
    const calls = this.engine.pending().map((call) => `\n  - ${call.details()}${period > 0 ? `, waiting ${(((this.engine.tick - call.born) * period) / 1000).toFixed(1)} s` : ''}`);
    const devices = this.engine.deviceStates().map((state) => `\n  device ${state}`);
    process.stderr.write(`ccjs watchdog: ${this.label}: ${reason}; ${calls.length} pending call(s)${calls.join('')}${devices.join('')}\n`);
  }

  /** Spinning and the watchdog of this endpoint. */
  private startProgress(): void {
    progressEngine.setBudget(this.config.spinMicroseconds);
    const self = this.world.endpoints[this.rank] as World['endpoints'][number];
    // Cores are the kernel's: hosts that share one (CCJS_HOST, containers) share them.
    const onMachine = this.world.endpoints.filter((endpoint) => endpoint.machine === self.machine).length;
    if (onMachine > os.availableParallelism()) this.liftSpinningVeto = progressEngine.forbidSpinning();
    const watchdogMs = this.config.watchdogMs;
    if (watchdogMs === undefined) return;
    this.watchdog = setInterval(() => {
      this.engine.tick += 1;
      const oldest = this.engine.oldestPending();
      if (oldest === undefined || this.engine.tick - oldest.born < 4 || this.dumped) return;
      this.dump(`a call has waited more than ${watchdogMs} ms`);
      this.client.dump(this.rank);
    }, watchdogMs / 4);
    this.watchdog.unref();
  }

  private peerLost(endpoint: number, message: string): void {
    if (this.stopping) return;
    const processRank = this.world.endpoints[endpoint]?.processRank ?? endpoint;
    this.engine.markLost(endpoint, new PeerLostError(message, processRank, { endpointRank: endpoint }));
    this.tellLost(endpoint, message);
  }

  /** This process's heartbeat thread declared a process lost: so is each of its endpoints. */
  private processLost(notice: LossNotice): void {
    if (notice.processRank === this.processRank) return;
    for (const endpoint of this.world.endpoints) {
      if (endpoint.processRank === notice.processRank) this.peerLost(endpoint.rank, `${endpointLabel(endpoint.rank, this.world.threadCount)} was lost (${notice.reason})`);
    }
    // A stopped process keeps its control connection open: the coordinator must not wait for its goodbye.
    this.coordinator?.processLost(notice.processRank);
  }

  private tellLost(endpoint: number, reason: string): void {
    if (this.stopping || this.lostPeers.has(endpoint)) return;
    this.lostPeers.add(endpoint);
    this.tell('peerLost', { process: this.world.endpoints[endpoint]?.processRank ?? endpoint, endpoint, reason });
  }

  private aborted(endpoint: number, message: string): void {
    if (this.stopping) return;
    const by = endpointLabel(endpoint, this.world.threadCount);
    this.tell('abort', { message, origin: endpoint });
    if (this.config.abortOnError) {
      this.stopping = true;
      this.traceFile?.close();
      void exitEndpoint(EXIT_ABORTED_ELSEWHERE, writeStderr(`ccjs: ${this.label} stops: the job was aborted by ${by}: ${message}\n`));
      return;
    }
    const error = new AbortError(`the job was aborted by ${by}: ${message}`);
    for (let peer = 0; peer < this.size; peer += 1) this.engine.markLost(peer, error);
  }

  private async shutdown(): Promise<void> {
    if (this.members.some((member) => memberCore(member).isRunning)) {
      await new Promise<void>((resolve) => {
        this.allDone = resolve;
      });
    }
    clearInterval(this.watchdog);
    this.liftSpinningVeto?.();
    // Nothing is dropped silently: say what arrived but was never received.
    for (const [key, count] of this.engine.unreceived()) {
      process.stderr.write(`ccjs: ${this.label} closes with ${count} unreceived message(s) for context/source/destination/tag ${key}\n`);
    }
    await this.engine.close();
    // Written before the goodbye: once every endpoint has said it, endpoint 0 joins the parts.
    this.traceFile?.close();
    // The process's goodbye to the heartbeats, once its last endpoint is done: not awaited but by
    // process 0, whose heartbeat thread serves until the coordinator has every goodbye.
    if (this.coordinator === undefined) void this.stopHeartbeat();
    await this.client.bye();
    await this.coordinator?.close();
    if (this.coordinator !== undefined) {
      await this.stopHeartbeat();
      this.traceFile?.join(this.size);
    }
    this.stopListening?.();
    this.tell('close');
  }

  private async stopHeartbeat(): Promise<void> {
    if (this.heartbeat === undefined) return;
    await workerThreadsEnded();
    await this.heartbeat.stop();
  }

  /** Tells the listeners of `event`; a listener that throws is reported, and the library goes on. */
  private tell<E extends keyof MasterEvents>(event: E, ...args: EventEmitter.EventArgs<MasterEvents, E>): void {
    try {
      this.emit(event, ...args);
    } catch (error) {
      process.stderr.write(`ccjs: a '${event}' listener of ${this.label} threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
  }
}

/** Says, once per process (from its main thread), why a device the rules wanted does not serve some pairs. */
function tellOnce(choices: readonly PairChoice[], threadRank: number): void {
  if (threadRank !== 0) return;
  for (const choice of choices) {
    if (choice.note === undefined || told.has(choice.note)) continue;
    told.add(choice.note);
    process.stderr.write(`ccjs: ${choice.note}; ${choice.device} serves those pairs\n`);
  }
}

/** The device rules: `transport` for every relation, then `devices` per relation. */
function deviceRules(config: Config): DeviceRules {
  const everywhere = config.transport === 'local' ? 'auto' : config.transport;
  return { threads: everywhere, host: everywhere, network: everywhere, ...config.devices };
}

/**
 * Host identity: CCJS_HOST, else the host name and the kernel's boot id (containers may share a
 * name); and the machine (the kernel), whose cores the endpoints of every host on it share.
 */
function hostIdentity(config: Config): { id: string; name: string; machine: string } {
  let bootId = '';
  try {
    bootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // Not Linux: the host name alone.
  }
  const named = `${os.hostname()}/${bootId}`;
  const machine = bootId === '' ? named : bootId;
  return config.host === undefined ? { id: named, name: os.hostname(), machine } : { id: config.host, name: config.host, machine };
}

function place(options: MasterOptions, config: Config): Placement {
  const threadCount = config.threads;
  const threadRank = threadRankOfThisThread();
  if (threadRank >= threadCount) throw new ConfigError(`this is thread ${threadRank}, but the job has ${threadCount} threads per process`);
  if (options.processRank !== undefined || options.processCount !== undefined) {
    if (threadCount > 1) throw new ConfigError(`option 'threads' ${threadCount} needs a launcher (ccjrun, mpirun, ...): with explicit processRank/processCount every endpoint is created by hand`);
    const processRank = options.processRank ?? 0;
    const processCount = options.processCount ?? 1;
    if (!Number.isInteger(processCount) || processCount < 1 || !Number.isInteger(processRank) || processRank < 0 || processRank >= processCount) {
      throw new ConfigError(`options processRank ${processRank} and processCount ${processCount} do not describe a process of a job`);
    }
    if (options.coordinator === undefined && processCount > 1) {
      throw new ConfigError(`option 'coordinator' (host:port of process 0's coordinator) is needed with processCount ${processCount}`);
    }
    const coordinator = options.coordinator === undefined ? { host: '127.0.0.1', port: 0 } : parseHostPort("option 'coordinator'", options.coordinator);
    return { processRank, processCount, threadRank, threadCount, coordinator, allLocal: isLoopback(coordinator.host), jobKey: '' };
  }
  const launch = detectLaunch(process.env);
  const inherited = coordinatorOfThisThread();
  const coordinator =
    inherited !== undefined
      ? parseHostPort('the main thread\'s coordinator', inherited)
      : options.coordinator !== undefined
      ? parseHostPort("option 'coordinator'", options.coordinator)
      : launch.coordinatorFile !== undefined
        ? { file: launch.coordinatorFile }
        : (launch.coordinator ?? { host: '127.0.0.1', port: 0 });
  return { processRank: launch.processRank, processCount: launch.processCount, threadRank, threadCount, coordinator, allLocal: launch.allLocal, jobKey: launch.jobKey };
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

/**
 * The coordinator listens only where its address points: that address when it is one (of this
 * host; listening fails otherwise), else, for a host name, the job's chosen interface.
 */
function bindHost(host: string, chosenInterface: string): string {
  return net.isIP(host) !== 0 || isLoopback(host) ? host : chosenInterface;
}

/** CCJS_INTERFACE may be an address or an interface name; otherwise loopback or the first external IPv4. */
function listenHost(config: Config, allLocal: boolean): string {
  const wanted = config.interface;
  const interfaces = os.networkInterfaces();
  if (wanted !== undefined) {
    const named = interfaces[wanted]?.find((entry) => entry.family === 'IPv4') ?? interfaces[wanted]?.[0];
    return named?.address ?? wanted;
  }
  if (allLocal) return '127.0.0.1';
  for (const entries of Object.values(interfaces)) {
    const external = entries?.find((entry) => entry.family === 'IPv4' && !entry.internal);
    if (external) return external.address;
  }
  return '127.0.0.1';
}
