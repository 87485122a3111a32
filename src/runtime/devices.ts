/**
 * This endpoint's devices: the rules of the device table, checked before anything starts; the
 * devices it listens with before it knows its peers; and, once the job's endpoints are known, one
 * device chosen per peer (src/engine/endpoints.ts) and connected under one messaging engine.
 */
import { ConfigError } from '../base/errors.js';
import { Engine } from '../engine/engine.js';
import type { PeerPlan } from '../engine/engine.js';
import { chooseDevices, endpointLabel } from '../engine/endpoints.js';
import type { DeviceRules, PairChoice, Unavailable, World } from '../engine/endpoints.js';
import type { Device, DeviceName } from '../../transport/device.js';
import { LocalDevice } from '../../transport/local/local-device.js';
import { ShmDevice } from '../../transport/shm/shm-device.js';
import { shmNative } from '../../transport/shm/native.js';
import { TcpDevice } from '../../transport/tcp/tcp-device.js';
import { UcxDevice } from '../../transport/ucx/ucx-device.js';
import { ucxMissing, ucxNative } from '../../transport/ucx/native.js';
import type { Config, TraceListener } from './config.js';
import { isLoopback } from './launch.js';
import type { HostIdentity, Placement } from './placement.js';
import { threadMemory } from './threads.js';

/** The device rules, and what they ask of this build. */
export interface DevicePlan {
  readonly rules: DeviceRules;
  /** The relations whose pairs the rules give to UCX. */
  readonly ucxAsked: readonly string[];
  /** Why the UCX addon cannot be used, if it cannot. */
  readonly ucxUnbuilt: string | undefined;
}

/** What the devices need to know of this endpoint. */
export interface DeviceSite {
  readonly config: Config;
  readonly placement: Placement;
  /** This endpoint's rank in the job (process-major, then thread). */
  readonly rank: number;
  /** Endpoints in the job. */
  readonly size: number;
  readonly identity: HostIdentity;
  readonly devicePlan: DevicePlan;
  /** The address the devices listen on. */
  readonly dataHost: string;
  readonly secret: Buffer;
}

/** The devices an endpoint listens with before it knows its peers; none in a job of one endpoint. */
export interface OpenDevices {
  readonly tcp: TcpDevice | undefined;
  readonly shm: ShmDevice | undefined;
  readonly ucx: UcxDevice | undefined;
}

/** The device rules of `config` for a job of `size` endpoints; ConfigError where this job or this build cannot follow them. */
export function planDevices(config: Config, size: number): DevicePlan {
  if (config.transport === 'local' && size > 1) {
    throw new ConfigError(`transport 'local' connects members of one endpoint only, but this job has ${size} endpoints; use 'auto' or 'tcp'`);
  }
  const rules = deviceRules(config);
  const ucxAsked = Object.entries(rules).filter(([, device]) => device === 'ucx').map(([relation]) => relation);
  const ucxUnbuilt = ucxMissing();
  if (ucxAsked.length > 0 && ucxUnbuilt !== undefined) {
    throw new ConfigError(`transport 'ucx' was asked for (${ucxAsked.join(', ')} pairs), but ${ucxUnbuilt}; or use 'auto' or 'tcp'`);
  }
  return { rules, ucxAsked, ucxUnbuilt };
}

/** Constructs this endpoint's devices: TCP (listening), shared memory, and UCX where it may serve a pair. */
export async function openDevices(site: DeviceSite, trace: TraceListener | undefined, jobId: () => string | undefined): Promise<OpenDevices> {
  const { config, placement, rank, size, devicePlan } = site;
  const { processRank, threadRank, threadCount } = placement;
  const tcp = size > 1 ? await TcpDevice.listen({ rank, listenHost: site.dataHost, timeoutMs: config.timeoutMs, jobId, secret: site.secret, tls: config.tls, checksum: config.checksum, trace }) : undefined;
  const native = shmNative();
  const shm =
    size > 1
      ? new ShmDevice({ rank, processRank, threadRank, threadCount, ringCapacity: config.shmRingBytes, singleCopy: config.shmSingleCopy, timeoutMs: config.timeoutMs, native: typeof native === 'string' ? undefined : native, threads: threadMemory })
      : undefined;
  // A UCP worker costs a context and a thread, and listens on the job's interface: made only where UCX may serve a pair.
  const ucxWanted = size > 1 && devicePlan.ucxUnbuilt === undefined && mayUseUcx(devicePlan.rules, placement, site.dataHost);
  const ucxAddon = ucxWanted ? ucxNative() : undefined;
  if (typeof ucxAddon === 'string') throw new ConfigError(`the UCX device cannot be used: ${ucxAddon}`);
  const ucx = ucxAddon ? new UcxDevice({ rank, host: site.identity.id, listenHost: site.dataHost, timeoutMs: config.timeoutMs, native: ucxAddon, trace, checksum: config.checksum }) : undefined;
  return { tcp, shm, ucx };
}

/**
 * Whether some pair of this job may be given to UCX: a relation the job can have (pairs in one
 * process need threads, the others several processes) that the rules give to UCX, or pairs on
 * other hosts under 'auto', unless the job stays on one host (its launcher says so, or it listens
 * on loopback, which no other host reaches).
 */
function mayUseUcx(rules: DeviceRules, placement: Placement, dataHost: string): boolean {
  const severalProcesses = placement.processCount > 1;
  const otherHosts = severalProcesses && !placement.allLocal && !isLoopback(dataHost);
  return (
    (rules.threads === 'ucx' && placement.threadCount > 1) ||
    (rules.host === 'ucx' && severalProcesses) ||
    (rules.network === 'ucx' && severalProcesses) ||
    (rules.network === 'auto' && otherHosts)
  );
}

/**
 * This endpoint's messaging engine over the job's endpoints (`world`): a device chosen per peer
 * endpoint by the device table, each device connected to the peers it serves.
 */
export async function connectEngine(site: DeviceSite, world: World, devices: OpenDevices): Promise<{ engine: Engine; choices: PairChoice[] }> {
  const { config, rank, devicePlan } = site;
  const { threadRank, threadCount } = site.placement;
  const { tcp, shm } = devices;
  const choices = chooseDevices(world, rank, devicePlan.rules, unavailability(devices.ucx, devicePlan.ucxUnbuilt));
  tellOnce(choices, threadRank);
  // Opened in case a pair would use it (mayUseUcx); where none does, it stops listening now.
  const ucx = choices.some((choice) => choice.device === 'ucx') ? devices.ucx : undefined;
  if (ucx === undefined) await devices.ucx?.close();
  const local = new LocalDevice();
  const byName: Partial<Record<DeviceName, Device>> = { local, tcp, shm, ucx };
  const deviceOf = (name: DeviceName): Device => byName[name] as Device;
  const peers: PeerPlan[] = choices.map((choice) => ({ device: deviceOf(choice.device), window: world.endpoints[choice.peer]?.receiveWindow ?? config.receiveWindow, otherHost: choice.relation === 'network' }));
  const engine = new Engine(
    { rank, eagerLimit: config.eagerLimit, sendBuffer: config.sendBuffer, timeoutMs: config.timeoutMs, processOf: (endpoint) => world.endpoints[endpoint]?.processRank ?? -1, labelOf: (endpoint) => endpointLabel(endpoint, threadCount) },
    peers,
    Object.values(byName).filter((device): device is Device => device !== undefined),
  );
  const served = (name: DeviceName) => choices.filter((choice) => choice.device === name).map((choice) => ({ rank: choice.peer, address: world.endpoints[choice.peer]?.addresses[name] }));
  await engine.connect((device) => served(device.name));
  return { engine, choices };
}

/** The device rules: `transport` for every relation, then `devices` per relation. */
function deviceRules(config: Config): DeviceRules {
  const everywhere = config.transport === 'local' ? 'auto' : config.transport;
  return { threads: everywhere, host: everywhere, network: everywhere, ...config.devices };
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

/** Says, once per process (from its main thread), why a device the rules wanted does not serve some pairs. */
function tellOnce(choices: readonly PairChoice[], threadRank: number): void {
  if (threadRank !== 0) return;
  for (const choice of choices) {
    if (choice.note === undefined || told.has(choice.note)) continue;
    told.add(choice.note);
    process.stderr.write(`ccjs: ${choice.note}; ${choice.device} serves those pairs\n`);
  }
}
