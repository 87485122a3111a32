/**
 * Endpoints and the device table. Every ColGroupMaster is one endpoint, identified by (host,
 * process, thread); the coordinator collects each endpoint's identity and address records (one per
 * device it offers) and hands every endpoint the whole table, the world. Each endpoint then
 * chooses one device per peer, once, by rules on how the two relate (in the spirit of Gloo's
 * Context::getPair): same endpoint → local; same process → threads' shared memory; same host →
 * shared memory; otherwise UCX where it is built, else TCP. Configuration overrides each rule.
 */
import type { DeviceName } from '../../transport/device.js';
import { ConfigError } from '../base/errors.js';

export interface EndpointInfo {
  readonly rank: number;
  readonly processRank: number;
  readonly threadRank: number;
  /** Host identity: endpoints with the same one share memory. */
  readonly host: string;
  /** The host's name, for people. */
  readonly hostname: string;
  /**
   * The kernel the endpoint runs on (its boot id): endpoints on one share its cores, even where
   * they are different hosts by `host` (CCJS_HOST, containers, network namespaces).
   */
  readonly machine: string;
  readonly pid: number;
  /** Bytes of unmatched messages this endpoint lets each peer leave with it. */
  readonly receiveWindow: number;
  /** Address records by device name. */
  readonly addresses: Readonly<Record<string, unknown>>;
}

export interface World {
  readonly jobId: string;
  readonly processCount: number;
  readonly threadCount: number;
  /** By endpoint rank. */
  readonly endpoints: readonly EndpointInfo[];
}

/** How two endpoints relate: the key of the device rules. */
export type Relation = 'endpoint' | 'threads' | 'host' | 'network';

export const RELATIONS: readonly Exclude<Relation, 'endpoint'>[] = ['threads', 'host', 'network'];

const RELATION_NAMES: Record<Relation, string> = {
  endpoint: 'same endpoint',
  threads: 'same process',
  host: 'same host',
  network: 'other host',
};

export function relationOf(a: EndpointInfo, b: EndpointInfo): Relation {
  if (a.rank === b.rank) return 'endpoint';
  if (a.host !== b.host) return 'network';
  return a.processRank === b.processRank ? 'threads' : 'host';
}

/** A choice per relation; 'auto' means the best device available for it. */
export type DeviceChoice = DeviceName | 'auto';
/** The device for pairs of endpoints in one process (`threads`), on one host (`host`), and on different hosts (`network`). */
export type DeviceRules = Readonly<Record<Exclude<Relation, 'endpoint'>, DeviceChoice>>;

/** What 'auto' prefers for each relation, best first. */
const PREFERENCES: Readonly<Record<Exclude<Relation, 'endpoint'>, readonly DeviceName[]>> = {
  threads: ['shm', 'tcp'],
  host: ['shm', 'tcp'],
  network: ['ucx', 'tcp'],
};

/** Devices that can serve a relation at all (shared memory ends at the host). */
const REACH: Readonly<Record<DeviceName, readonly Relation[]>> = {
  local: ['endpoint'],
  shm: ['threads', 'host'],
  tcp: ['threads', 'host', 'network'],
  ucx: ['threads', 'host', 'network'],
};

/** Why a device cannot serve some pairs here (its native addon is not built, ...). */
export interface Unavailability {
  readonly reason: string;
  /** Report it even when 'auto' merely preferred the device. */
  readonly loud: boolean;
}

/** Whether `device` can serve pairs of `relation` here: undefined when it can. */
export type Unavailable = (device: DeviceName, relation: Relation) => Unavailability | undefined;

export interface PairChoice {
  readonly peer: number;
  readonly relation: Relation;
  readonly device: DeviceName;
  /** Set when the rules asked for another device that could not serve this pair. */
  readonly note?: string;
}

/**
 * The device for every peer of endpoint `me`. A device the rules name that cannot serve a pair
 * (shared memory across hosts, or its addon is not built) gives way to the best one that can, with
 * a note saying why; so does a device 'auto' prefers when its unavailability is loud.
 */
export function chooseDevices(world: World, me: number, rules: DeviceRules, unavailable: Unavailable): PairChoice[] {
  const self = world.endpoints[me] as EndpointInfo;
  return world.endpoints.map((peer) => {
    const relation = relationOf(self, peer);
    if (relation === 'endpoint') return { peer: peer.rank, relation, device: 'local' };
    const wanted = rules[relation];
    const notes: string[] = [];
    if (wanted !== 'auto') {
      const missing = REACH[wanted].includes(relation) ? unavailable(wanted, relation) : { reason: `it cannot serve ${RELATION_NAMES[relation]} pairs`, loud: true };
      if (missing === undefined) return { peer: peer.rank, relation, device: wanted };
      notes.push(`'${wanted}' is not used: ${missing.reason}`);
    }
    let device: DeviceName | undefined;
    for (const candidate of PREFERENCES[relation]) {
      const missing = unavailable(candidate, relation);
      if (missing === undefined) {
        device = candidate;
        break;
      }
      if (missing.loud && wanted === 'auto') notes.push(`'${candidate}' is not used: ${missing.reason}`);
    }
    if (device === undefined) throw new ConfigError(`no device can serve ${RELATION_NAMES[relation]} pairs here`);
    return notes.length === 0 ? { peer: peer.rank, relation, device } : { peer: peer.rank, relation, device, note: notes.join('; ') };
  });
}

/** The table as text: one line per peer, e.g. "endpoint 0 → endpoint 3: tcp (other host)". */
export function describeDevices(world: World, me: number, choices: readonly PairChoice[]): string {
  const self = world.endpoints[me] as EndpointInfo;
  const lines = [`endpoint ${me} (host ${self.hostname}, process ${self.processRank}, thread ${self.threadRank}):`];
  for (const choice of choices) {
    const peer = world.endpoints[choice.peer] as EndpointInfo;
    const where = `process ${peer.processRank}, thread ${peer.threadRank}`;
    lines.push(`  → endpoint ${choice.peer} (${where}): ${choice.device} (${RELATION_NAMES[choice.relation]})${choice.note ? ` — ${choice.note}` : ''}`);
  }
  return lines.join('\n');
}

/** "process 2" in a job of one endpoint per process, "endpoint 5 (process 2, thread 1)" otherwise. */
export function endpointLabel(rank: number, threadCount: number): string {
  if (threadCount === 1) return `process ${rank}`;
  return `endpoint ${rank} (process ${Math.floor(rank / threadCount)}, thread ${rank % threadCount})`;
}
