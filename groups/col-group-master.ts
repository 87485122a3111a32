/**
 * One per endpoint (a process, or one of its worker threads): the CCJ API of the job runtime.
 * create() joins the job step by step (src/runtime/: bootstrap, devices, engine, threads,
 * heartbeats); the master then builds groups in CCJ's two phases, addMember then
 * getGroup(name, n), hands failures to the failure policy, and closes once its members are done.
 */
import path from 'node:path';
import { EventEmitter } from 'eventemitter3';
import { ColGroup } from './col-group.js';
import { InactiveGroup } from './inactive-group.js';
import { splitGroup } from './split.js';
import { ColMember, memberCore } from './col-member.js';
import type { MemberEndpoint } from './col-member.js';
import type { Config, MasterOptions, TraceListener } from '../src/runtime/config.js';
import { CoordinatorClient } from '../src/runtime/coordinator-client.js';
import type { CoordinatorEvents } from '../src/runtime/coordinator-client.js';
import { abandonJoin, bootstrap, coordinatorAddress, followHeartbeats, helloOf, startThreads } from '../src/runtime/bootstrap.js';
import type { Joined } from '../src/runtime/bootstrap.js';
import { connectEngine, openDevices } from '../src/runtime/devices.js';
import { FailurePolicy } from '../src/runtime/failure-policy.js';
import type { AbortEvent, PeerLostEvent } from '../src/runtime/failure-events.js';
import { listenForLosses } from '../src/runtime/heartbeat.js';
import { leaveJob } from '../src/runtime/shutdown.js';
import { startSpinning } from '../src/runtime/spinning.js';
import { Watchdog } from '../src/runtime/watchdog.js';
import { createSerializer } from '../src/serialization/index.js';
import { ConfigError, GroupError } from '../src/base/errors.js';
import type { Engine, MessageCounts } from '../src/engine/engine.js';
import { describeDevices, endpointLabel } from '../src/engine/endpoints.js';
import type { PairChoice, World } from '../src/engine/endpoints.js';
import { Selector } from '../src/collectives/selection.js';
import { nextTurn, progressEngine } from '../src/engine/progress.js';
import type { WaitCounts } from '../src/engine/progress.js';

/** Why a group of `numberOfMembers` cannot form in a process that no launcher started, and how to start the job. */
function launcherMissing(numberOfMembers: number, membersHere: number): ConfigError {
  const script = process.argv[1] === undefined ? 'job.js' : path.relative(process.cwd(), process.argv[1]);
  const processes = Math.ceil(numberOfMembers / Math.max(membersHere, 1));
  return new ConfigError(
    `no launcher started this process, so the job is this 1 endpoint, with ${membersHere} member(s): a group of ${numberOfMembers} cannot form. ` +
      `Start the job with a launcher: npx ccjrun -n ${processes} ${script} (or mpirun -n ${processes}, srun -n ${processes}), or set CCJS_RANK, CCJS_SIZE and CCJS_COORDINATOR in each of its processes`,
  );
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
  private readonly failures: FailurePolicy;
  private readonly liftSpinningVeto: (() => void) | undefined;
  private readonly watchdog: Watchdog;

  private constructor(
    private readonly job: Joined,
    /** @internal What this endpoint's members' calls use. */
    readonly endpoint: MemberEndpoint,
  ) {
    super();
    this.failures = new FailurePolicy(job, { peerLost: (event) => this.tell('peerLost', event), abort: (event) => this.tell('abort', event) });
    this.liftSpinningVeto = startSpinning(job.config, job.world, job.rank);
    this.watchdog = new Watchdog(job);
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
    let master: ColGroupMaster | undefined;
    const boot = await bootstrap(options);
    const { config, placement } = boot;
    // Trace lines go where the configuration says and, once the master exists, to its listeners.
    const printTrace = config.trace;
    const trace: TraceListener | undefined = printTrace && ((line) => {
      printTrace(line);
      master?.tell('trace', line);
    });
    let world: World | undefined;
    const devices = await openDevices(boot, trace, () => world?.jobId);
    const events: CoordinatorEvents = {
      lost: (endpoint, message) => master?.failures.peerLost(endpoint, message),
      formed: (context) => master?.job.engine.contextFormed(context),
      abort: (endpoint, message) => master?.failures.aborted(endpoint, message),
      dump: (endpoint) => master?.watchdog.dump(`the watchdog of ${endpointLabel(endpoint, placement.threadCount)} fired`),
    };
    let heartbeat = boot.heartbeatServer?.thread;
    let stopListening: (() => void) | undefined;
    let client: CoordinatorClient;
    let engine: Engine;
    let choices: PairChoice[];
    try {
      const address = await coordinatorAddress(boot);
      startThreads(boot, address);
      ({ client, world } = await CoordinatorClient.connect(address.host, address.port, helloOf(boot, devices), config.timeoutMs, events, boot.secret));
      if (placement.processCount > 1) {
        stopListening = listenForLosses(world.jobId, placement.processRank, (notice) => master?.failures.processLost(notice));
        heartbeat = followHeartbeats(boot, world);
      }
      ({ engine, choices } = await connectEngine(boot, world, devices));
    } catch (error) {
      await abandonJoin(boot, devices, heartbeat, stopListening, error);
      throw error;
    }
    const label = endpointLabel(boot.rank, world.threadCount);
    const serializer = createSerializer(config.serializer, { outOfBandThreshold: config.outOfBandThreshold, strict: config.strictSerialization });
    const selector = new Selector(config.collectives, config.algorithms, trace);
    const job: Joined = { config, world, rank: boot.rank, unlaunched: placement.unlaunched, label, engine, choices, client, coordinator: boot.coordinator, traceFile: boot.traceFile, heartbeat, stopListening };
    master = new ColGroupMaster(job, { label, engine, serializer, selector, traceFile: boot.traceFile });
    trace?.(`ccjs trace: devices of ${master.describe()}`);
    return master;
  }

  /** @internal The resolved configuration. */
  get config(): Config {
    return this.job.config;
  }

  /** @internal */
  get engine(): Engine {
    return this.job.engine;
  }

  /** This endpoint's rank in the job (process-major, then thread). */
  get rank(): number {
    return this.job.rank;
  }

  /** Processes in the job. */
  get processCount(): number {
    return this.job.world.processCount;
  }

  /** This endpoint's process (0-based). */
  get processRank(): number {
    return Math.floor(this.rank / this.job.world.threadCount);
  }

  /** Endpoints in the job: processes × threads per process. */
  get size(): number {
    return this.job.world.endpoints.length;
  }

  /** 0 on a process's main thread, 1..threadCount−1 in its worker threads. */
  get threadRank(): number {
    return this.rank % this.job.world.threadCount;
  }

  /** Endpoints per process (the `threads` option, `--threads`, `CCJS_THREADS`). */
  get threadCount(): number {
    return this.job.world.threadCount;
  }

  /** This endpoint's host (CCJS_HOST, or the host name): endpoints on one host share memory. */
  get host(): string {
    return (this.job.world.endpoints[this.rank] as World['endpoints'][number]).hostname;
  }

  /** "process 2", or "endpoint 5 (process 2, thread 1)" in a job with threads. */
  get label(): string {
    return this.job.label;
  }

  /** Which device serves which peer endpoint, one line each (also printed at start-up with CCJS_TRACE). */
  describe(): string {
    return describeDevices(this.job.world, this.rank, this.job.choices);
  }

  /**
   * Messages and bytes this endpoint sent since it started (point-to-point and collective, each
   * message once whatever its protocol), by device and by same host / other host. Take two and
   * subtract to count one call; sum over endpoints for a job.
   */
  messageCounts(): MessageCounts {
    return this.engine.counters();
  }

  /**
   * How this thread's calls waited since it started: calls that had to wait, how many spun and how
   * many slept (left to the event loop: their spin ran out or spinning is off), the doorbells that
   * woke the thread, and the collective calls completed. Take two and subtract: `sleeps` over
   * `collectives` is the sleeps per collective call. Counted per thread: masters of one thread
   * (in-process tests) share them.
   */
  waitCounts(): WaitCounts {
    return { ...progressEngine.stats };
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
   * @throws {@link ConfigError} (rejects, at once) when no launcher started this process and `numberOfMembers` exceeds its members: saying how to start the job.
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
    const ask = () => this.job.client.getGroup(groupName, numberOfMembers, this.config.timeoutMs);
    // Members added in the same turn of the event loop (a loop that adds and starts them one by one) count too.
    const described = this.tooFewWithoutLauncher(numberOfMembers) ? nextTurn().then(() => this.tooFewWithoutLauncher(numberOfMembers) ? Promise.reject(launcherMissing(numberOfMembers, this.members.length)) : ask()) : ask();
    const group = described.then((description) => {
      const endpoints = Int32Array.from(description.members, ([endpoint]) => endpoint);
      const route = this.engine.route(description.context, description.name, endpoints);
      const hosts = description.members.map(([endpoint]) => (this.job.world.endpoints[endpoint] as World['endpoints'][number]).host);
      const group = new ColGroup(description.name, description.context, description.members, this.rank, this.members, this.job.world.threadCount, route, hosts);
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
   * No launcher started this process (the job is this one endpoint) and a group of
   * `numberOfMembers` needs more members than it has: getGroup says so at once, rather than
   * waiting timeoutMs for members nobody will start.
   */
  private tooFewWithoutLauncher(numberOfMembers: number): boolean {
    return this.job.unlaunched && this.size === 1 && numberOfMembers > this.members.length;
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
    if (this.job.client.activeGroups.has(groupName)) throw new GroupError(`cannot join group '${groupName}': it is already active`);
    const members = this.joined.get(groupName) ?? new Set<ColMember>();
    if (members.has(member)) throw new GroupError(`${member.constructor.name} has already joined group '${groupName}'`);
    memberCore(member).attach(this, this.members.length);
    if (!this.members.includes(member)) this.members.push(member);
    members.add(member);
    this.joined.set(groupName, members);
    this.job.client.join(groupName, memberCore(member).localId, this.joinCount++, key);
  }

  /** @internal A member returned from run() or called done(); the last one done closes the master (autoClose). */
  async memberDone(_member: ColMember): Promise<void> {
    if (!this.members.some((member) => memberCore(member).isRunning)) this.allDone?.();
    if (this.config.autoClose && this.members.every((member) => memberCore(member).finished)) await this.close();
  }

  /** @internal An exception escaped a member's run(): the failure policy aborts the job, naming the member and its groups. */
  memberFailed(member: ColMember, error: unknown): Promise<void> {
    const groups = [...this.joined].filter(([, members]) => members.has(member)).map(([name]) => name);
    return this.failures.memberFailed(`${memberCore(member).label} (groups: ${groups.join(', ') || 'none'})`, error);
  }

  private async shutdown(): Promise<void> {
    if (this.members.some((member) => memberCore(member).isRunning)) {
      await new Promise<void>((resolve) => {
        this.allDone = resolve;
      });
    }
    this.watchdog.stop();
    this.liftSpinningVeto?.();
    await leaveJob(this.job);
    this.tell('close');
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
