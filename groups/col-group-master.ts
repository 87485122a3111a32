/**
 * One per process: reads the configuration and the launcher's environment, connects the job
 * (coordinator, then the data device), and builds groups in CCJ's two phases: addMember, then
 * getGroup(name, n).
 */
import fs from 'node:fs';
import os from 'node:os';
import { ColGroup } from './col-group.js';
import { InactiveGroup } from './inactive-group.js';
import { splitGroup } from './split.js';
import { Coordinator } from './coordinator.js';
import { CoordinatorClient } from './coordinator-client.js';
import type { World } from './coordinator-client.js';
import { ColMember, memberCore } from '../src/member.js';
import { Messenger } from '../src/messaging.js';
import { resolveConfig } from '../src/config.js';
import type { Config, MasterOptions } from '../src/config.js';
import { detectLaunch, isLoopback, parseHostPort } from '../src/launch.js';
import { createSerializer } from '../src/serialization/index.js';
import { AbortError, ConfigError, GroupError, PeerLostError, TimeoutError } from '../src/errors.js';
import { Transport } from '../transport/transport.js';
import { LocalDevice } from '../transport/local/local-device.js';
import { TcpDevice } from '../transport/tcp/tcp-device.js';
import { Selector } from '../src/collectives/selection.js';

interface Address {
  readonly host: string;
  readonly port: number;
}

interface Placement {
  readonly processRank: number;
  readonly processCount: number;
  /** Where process 0's coordinator listens, or the file in which it publishes its address. */
  readonly coordinator: Address | { readonly file: string };
  readonly allLocal: boolean;
  readonly jobKey: string;
}

export class ColGroupMaster {
  private readonly members: ColMember[] = [];
  private readonly joined = new Map<string, Set<ColMember>>();
  private readonly groupRequests = new Map<string, { size: number; group: Promise<ColGroup> }>();
  private joinCount = 0;
  private closing: Promise<void> | undefined;
  private allDone: (() => void) | undefined;

  private constructor(
    readonly config: Config,
    readonly processRank: number,
    readonly processCount: number,
    /** @internal */ readonly messenger: Messenger,
    /** @internal Chooses each collective call's algorithm. */ readonly selector: Selector,
    private readonly client: CoordinatorClient,
    private readonly coordinator: Coordinator | undefined,
  ) {}

  static async create(options: MasterOptions = {}): Promise<ColGroupMaster> {
    const config = resolveConfig(options);
    const placement = place(options);
    const { processRank, processCount } = placement;
    if (config.transport === 'local' && processCount > 1) {
      throw new ConfigError(`transport 'local' connects members of one process only, but this job has ${processCount} processes; use 'auto' or 'tcp'`);
    }
    if (config.transport === 'shm' || config.transport === 'ucx') {
      throw new ConfigError(`transport '${config.transport}' is not part of this build yet; use 'auto', 'tcp' or 'local'`);
    }
    const coordinatorBinding =
      'file' in placement.coordinator ? { host: listenHost(config, placement.allLocal), port: 0 } : { host: bindHost(placement.coordinator.host), port: placement.coordinator.port };
    const coordinator = processRank === 0 ? await Coordinator.start(coordinatorBinding.host, coordinatorBinding.port, processCount, placement.jobKey) : undefined;
    if (coordinator && 'file' in placement.coordinator) publishAddress(placement.coordinator.file, { host: coordinatorBinding.host, port: coordinator.port });
    const tcp =
      processCount > 1
        ? await TcpDevice.listen({
            processRank,
            processCount,
            listenHost: listenHost(config, placement.allLocal),
            eagerLimit: config.eagerLimit,
            timeoutMs: config.timeoutMs,
          })
        : undefined;
    let master: ColGroupMaster | undefined;
    const events = {
      lost: (lostRank: number, message: string) => master?.peerLost(lostRank, new PeerLostError(message, lostRank)),
      abort: (abortingRank: number, message: string) => master?.aborted(abortingRank, message),
    };
    let world: World;
    let client: CoordinatorClient;
    try {
      const hello = { type: 'hello' as const, processRank, processCount, jobKey: placement.jobKey, host: tcp?.address.host ?? '', port: tcp?.address.port ?? 0 };
      const address =
        'file' in placement.coordinator
          ? coordinator
            ? { host: coordinatorBinding.host, port: coordinator.port }
            : await readPublishedAddress(placement.coordinator.file, config.timeoutMs)
          : { host: placement.coordinator.host, port: coordinator?.port ?? placement.coordinator.port };
      ({ client, world } = await CoordinatorClient.connect(address.host, address.port, hello, config.timeoutMs, events));
      await tcp?.connect(world.addresses, world.jobId);
    } catch (error) {
      await Promise.allSettled([tcp?.close(), coordinator?.forceClose()]);
      throw error;
    }
    const serializer = createSerializer(config.serializer, { outOfBandThreshold: config.outOfBandThreshold, strict: config.strictSerialization });
    const transport = new Transport(processRank, new LocalDevice(), tcp);
    const selector = new Selector(config.collectives, config.algorithms, config.trace);
    master = new ColGroupMaster(config, processRank, processCount, new Messenger(transport, serializer), selector, client, coordinator);
    tcp?.onPeerLost((lostRank, error) => master?.peerLost(lostRank, error));
    return master;
  }

  /** Members the job is sized for: processes × members per process the launcher planned. */
  getNumberOfCpus(): number {
    const threads = Number(process.env.CCJS_THREADS ?? '1');
    return this.processCount * (Number.isInteger(threads) && threads > 0 ? threads : 1);
  }

  /** Phase 1: join `groupName`, creating it if new; GroupError if it is already active. */
  addMember(groupName: string, member: ColMember): void {
    if (typeof groupName !== 'string' || groupName === '') throw new TypeError(`addMember: group name must be a non-empty string, got ${JSON.stringify(groupName)}`);
    if (!(member instanceof ColMember)) throw new TypeError(`addMember: ${String(member)} is not a ColMember`);
    this.join(groupName, member, []);
  }

  /**
   * Phase 2: resolves with the active group once `numberOfMembers` members job-wide have joined.
   * Calls with the same name in one process share one result.
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
      const group = new ColGroup(description.name, description.context, description.members, this.processRank, this.members);
      for (const member of this.joined.get(groupName) ?? []) {
        if (!group.has(member)) throw new GroupError(`${member.constructor.name} joined group '${groupName}' too late: the group was already active`);
      }
      return group;
    });
    this.groupRequests.set(groupName, { size: numberOfMembers, group });
    return group;
  }

  /** An inactive copy of `group` to reshape and activate under `newName`. */
  copyGroup(group: ColGroup, newName: string): InactiveGroup {
    return new InactiveGroup(this, group, newName);
  }

  /**
   * Collective over `group` (MPI_Comm_split): members with the same `color` form a new group,
   * ranked by `key`, then by their rank in `group`.
   */
  split(group: ColGroup, member: ColMember, color: number, key = 0): Promise<ColGroup> {
    return splitGroup(this, group, member, color, key);
  }

  /** Waits until every started local member is done, flushes, and releases this process's resources. */
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

  /** @internal An exception escaped a member's run(): abort the job, naming the member. */
  async memberFailed(member: ColMember, error: unknown): Promise<void> {
    if (!this.config.abortOnError) return;
    const groups = [...this.joined].filter(([, members]) => members.has(member)).map(([name]) => name);
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const message = `member ${member.constructor.name} #${memberCore(member).localId} of process ${this.processRank} (groups: ${groups.join(', ') || 'none'}) failed: ${detail}`;
    process.stderr.write(`ccjs: aborting the job: ${message}\n`);
    this.client.abort(message, this.processRank);
    await this.client.flush();
    process.exit(1);
  }

  private peerLost(processRank: number, error: Error): void {
    this.messenger.transport.markLost(processRank, error);
  }

  private aborted(processRank: number, message: string): void {
    if (this.config.abortOnError) {
      process.stderr.write(`ccjs: process ${this.processRank} stops: the job was aborted by process ${processRank}: ${message}\n`);
      process.exit(1);
    }
    const error = new AbortError(`the job was aborted by process ${processRank}: ${message}`);
    for (let rank = 0; rank < this.processCount; rank += 1) this.messenger.transport.markLost(rank, error);
  }

  private async shutdown(): Promise<void> {
    if (this.members.some((member) => memberCore(member).isRunning)) {
      await new Promise<void>((resolve) => {
        this.allDone = resolve;
      });
    }
    // Nothing is dropped silently: say what arrived but was never received.
    for (const [key, count] of this.messenger.transport.unreceived()) {
      process.stderr.write(`ccjs: process ${this.processRank} closes with ${count} unreceived message(s) for context/source/destination/tag ${key}\n`);
    }
    await this.messenger.transport.close();
    await this.client.bye();
    await this.coordinator?.close();
  }
}

function place(options: MasterOptions): Placement {
  if (options.processRank !== undefined || options.processCount !== undefined) {
    const processRank = options.processRank ?? 0;
    const processCount = options.processCount ?? 1;
    if (!Number.isInteger(processCount) || processCount < 1 || !Number.isInteger(processRank) || processRank < 0 || processRank >= processCount) {
      throw new ConfigError(`options processRank ${processRank} and processCount ${processCount} do not describe a process of a job`);
    }
    if (options.coordinator === undefined && processCount > 1) {
      throw new ConfigError(`option 'coordinator' (host:port of process 0's coordinator) is needed with processCount ${processCount}`);
    }
    const coordinator = options.coordinator === undefined ? { host: '127.0.0.1', port: 0 } : parseHostPort("option 'coordinator'", options.coordinator);
    return { processRank, processCount, coordinator, allLocal: isLoopback(coordinator.host), jobKey: '' };
  }
  const launch = detectLaunch(process.env);
  const coordinator =
    options.coordinator !== undefined
      ? parseHostPort("option 'coordinator'", options.coordinator)
      : launch.coordinatorFile !== undefined
        ? { file: launch.coordinatorFile }
        : (launch.coordinator ?? { host: '127.0.0.1', port: 0 });
  return { processRank: launch.processRank, processCount: launch.processCount, coordinator, allLocal: launch.allLocal, jobKey: launch.jobKey };
}

/** Writes `host:port` to `file` atomically, so a reader never sees half of it. */
function publishAddress(file: string, address: Address): void {
  const partial = `${file}.${process.pid}.partial`;
  fs.writeFileSync(partial, `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`);
  fs.renameSync(partial, file);
}

/** Waits (polling, bounded by `timeoutMs`) for process 0 to publish its coordinator's address. */
async function readPublishedAddress(file: string, timeoutMs: number): Promise<Address> {
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

/** The coordinator listens on all interfaces unless the job stays on this host. */
function bindHost(host: string): string {
  return isLoopback(host) ? host : '0.0.0.0';
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
