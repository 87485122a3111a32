/**
 * Configuration: `create()` options, then CCJS_* environment variables, then the config file
 * (ccjs.config.json in the working directory, or CCJS_CONFIG / the `config` option), then
 * defaults (docs/API.md, "Configuration"). Unknown keys and bad values are ConfigErrors.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../base/errors.js';
import type { Serializer } from '../serialization/serializer.js';
import { checkTable, parseForcedAlgorithms } from '../collectives/selection.js';
import type { SelectionTable } from '../collectives/selection.js';
import type { CollectiveName } from '../collectives/algorithm.js';
import { RELATIONS } from '../engine/endpoints.js';
import type { DeviceChoice, DeviceRules } from '../engine/endpoints.js';

export const TRANSPORTS = ['auto', 'local', 'tcp', 'shm', 'ucx'] as const;
/** The `transport` option: `auto` (the best device per pair of endpoints) or one device everywhere it can serve. */
export type TransportName = (typeof TRANSPORTS)[number];
export const SERIALIZERS = ['msgpack', 'v8'] as const;
/** The built-in serializers: {@link MsgpackSerializer} (the default) and {@link V8Serializer}. */
export type SerializerName = (typeof SERIALIZERS)[number];

/**
 * Options of {@link ColGroupMaster.create}. Each one also has a `CCJS_*` environment variable
 * (named beside it) or a key in the config file (`ccjs.config.json`); precedence: these options,
 * then the environment, then the config file, then the defaults. Unknown options and bad values
 * are a {@link ConfigError} naming them.
 */
export interface MasterOptions {
  /** 'auto' (default): the best device for each pair of endpoints; a device name: that device wherever it can serve (CCJS_TRANSPORT). */
  transport?: TransportName;
  /** Per-relation device choices overriding `transport`, e.g. { host: 'tcp' } (CCJS_DEVICES='host=tcp'). */
  devices?: Partial<DeviceRules>;
  /** Endpoints per process: the process runs the script on its main thread and in threads − 1 worker threads (CCJS_THREADS). */
  threads?: number;
  /** How objects travel: 'msgpack' (default), 'v8', or your own {@link Serializer} (CCJS_SERIALIZER); every endpoint must use the same. */
  serializer?: SerializerName | Serializer;
  /** Bound for group formation, connecting, and detecting a lost peer, in ms (default 60000; CCJS_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Path of a config file (CCJS_CONFIG; default `ccjs.config.json` in the working directory, if it exists). */
  config?: string;
  /** Messages above this many bytes use the rendezvous protocol (default 131072; CCJS_EAGER_LIMIT). */
  eagerLimit?: number;
  /** Bytes of unreceived messages each peer endpoint may leave here; a sender that would exceed it waits (default 4 MiB; CCJS_RECEIVE_WINDOW). */
  receiveWindow?: number;
  /** Bytes of large sendAsync data copied at the sender while waiting for receivers; past it sendAsync waits (default 64 MiB; CCJS_SEND_BUFFER). */
  sendBuffer?: number;
  /** Bytes of each shared-memory ring (one per ordered pair of endpoints on a host; a power of two from 65536, default 512 KiB; CCJS_SHM_RING_BYTES). */
  shmRingBytes?: number;
  /** Large messages between processes of one host are read straight from the sender's memory, one copy instead of two through a ring (default true; CCJS_SHM_SINGLE_COPY). */
  shmSingleCopy?: boolean;
  /** How long a waiting call spins on polling devices before it sleeps, in µs (0: never; default 5000, longer than a time slice of the scheduler; CCJS_SPIN_US). */
  spinMicroseconds?: number;
  /** Log every endpoint's pending calls once when a call has waited this long (ms; off when unset; CCJS_WATCHDOG_MS). */
  watchdogMs?: number;
  /** Host identity for "same host" decisions (CCJS_HOST); default: host name + boot id. */
  host?: string;
  /** Typed arrays nested in an object travel out of band, beside the serialized graph, from this many bytes on (default 1024; CCJS_OOB_THRESHOLD). */
  outOfBandThreshold?: number;
  /** Reject instances of unregistered classes with a SerializationError at the sender (default true); false sends them as plain objects (CCJS_STRICT_SERIALIZATION). */
  strictSerialization?: boolean;
  /** Address or interface name the TCP device listens on (CCJS_INTERFACE; default loopback for a job on one host, else the first external IPv4). */
  interface?: string;
  /** Encrypt the tcp device's connections with TLS keyed by the job secret (CCJS_TLS; default false; every process of a job must agree). */
  tls?: boolean;
  /** Check every frame the network devices (tcp, ucx) carry with a CRC32C, refusing (BadFrameError, field 'checksum') one whose bytes changed on the way (CCJS_CHECKSUM; default false; every process of a job must agree). */
  checksum?: boolean;
  /** An exception escaping a member's run() aborts the job (true, default) or only rejects start() (false). Not in the config file. */
  abortOnError?: boolean;
  /** Close the master once every member added to it is done (default true). Not in the config file. */
  autoClose?: boolean;
  /** Algorithm selection rules per collective (the config file's "collectives" key, which `ccjtune` writes). */
  collectives?: SelectionTable;
  /** One algorithm per collective, e.g. 'allReduce=ring,broadcast=mst' (CCJS_ALGORITHMS). */
  algorithms?: string;
  /** Report the algorithm each collective call runs: true prints to stderr (CCJS_TRACE=1), a function receives the lines. */
  trace?: boolean | TraceListener;
  /** Write a timeline of every endpoint's calls to this file, in Chrome's trace event format (CCJS_TRACE_FILE). */
  traceFile?: string;
  /** This process's rank, overriding the launcher's (for jobs started by hand); needs `coordinator` when `processCount` > 1. */
  processRank?: number;
  /** The number of processes, overriding the launcher's (for jobs started by hand). */
  processCount?: number;
  /** `host:port` of the coordinator (process 0 listens there), overriding the launcher's (CCJS_COORDINATOR in the environment). */
  coordinator?: string;
}

/** The options resolved, with their defaults. */
export interface Config {
  readonly transport: TransportName;
  readonly devices: Partial<DeviceRules>;
  readonly threads: number;
  readonly receiveWindow: number;
  readonly sendBuffer: number;
  readonly shmRingBytes: number;
  readonly shmSingleCopy: boolean;
  readonly spinMicroseconds: number;
  readonly watchdogMs: number | undefined;
  readonly host: string | undefined;
  readonly serializer: SerializerName | Serializer;
  readonly timeoutMs: number;
  readonly eagerLimit: number;
  readonly outOfBandThreshold: number;
  readonly strictSerialization: boolean;
  readonly interface: string | undefined;
  readonly tls: boolean;
  readonly checksum: boolean;
  readonly abortOnError: boolean;
  readonly autoClose: boolean;
  readonly collectives: SelectionTable | undefined;
  readonly algorithms: Partial<Record<CollectiveName, string>>;
  readonly trace: TraceListener | undefined;
  /** An absolute path, so that every endpoint names the same file. */
  readonly traceFile: string | undefined;
}

/** Receives the lines that `trace: true` would print to stderr. */
export type TraceListener = (line: string) => void;

const traceToStderr: TraceListener = (line) => void process.stderr.write(`${line}\n`);

const DEFAULTS: Config = {
  transport: 'auto',
  devices: {},
  threads: 1,
  receiveWindow: 4 * 1024 * 1024,
  sendBuffer: 64 * 1024 * 1024,
  shmRingBytes: 512 * 1024,
  shmSingleCopy: true,
  // About two wake-ups of a blocked thread here (20-100 µs each): a shorter spin lets a ping-pong
  // fall into both sides sleeping (UCX's wake-up path is the slowest); the budget halves anyway
  // while a peer computes (src/engine/progress.ts).
  // Outlasts a peer's preemption for a time slice (1-4 ms), so that spinning members rarely sleep (MPI spins for good); the budget still halves for peers that compute.
  spinMicroseconds: 5000,
  watchdogMs: undefined,
  host: undefined,
  serializer: 'msgpack',
  timeoutMs: 60_000,
  eagerLimit: 128 * 1024,
  outOfBandThreshold: 1024,
  strictSerialization: true,
  interface: undefined,
  tls: false,
  checksum: false,
  abortOnError: true,
  autoClose: true,
  collectives: undefined,
  algorithms: {},
  trace: undefined,
  traceFile: undefined,
};

/** Keys a config file may hold; `collectives` is the algorithm selection table (see ccjtune). */
const FILE_KEYS = [
  'transport',
  'devices',
  'threads',
  'serializer',
  'timeoutMs',
  'eagerLimit',
  'receiveWindow',
  'sendBuffer',
  'shmRingBytes',
  'shmSingleCopy',
  'spinMicroseconds',
  'watchdogMs',
  'outOfBandThreshold',
  'strictSerialization',
  'interface',
  'tls',
  'checksum',
  'collectives',
  'algorithms',
  'trace',
  'traceFile',
] as const;

const ENVIRONMENT: Record<string, keyof Config> = {
  CCJS_TRANSPORT: 'transport',
  CCJS_DEVICES: 'devices',
  CCJS_THREADS: 'threads',
  CCJS_RECEIVE_WINDOW: 'receiveWindow',
  CCJS_SEND_BUFFER: 'sendBuffer',
  CCJS_SHM_RING_BYTES: 'shmRingBytes',
  CCJS_SHM_SINGLE_COPY: 'shmSingleCopy',
  CCJS_SPIN_US: 'spinMicroseconds',
  CCJS_WATCHDOG_MS: 'watchdogMs',
  CCJS_HOST: 'host',
  CCJS_SERIALIZER: 'serializer',
  CCJS_TIMEOUT_MS: 'timeoutMs',
  CCJS_EAGER_LIMIT: 'eagerLimit',
  CCJS_OOB_THRESHOLD: 'outOfBandThreshold',
  CCJS_STRICT_SERIALIZATION: 'strictSerialization',
  CCJS_INTERFACE: 'interface',
  CCJS_TLS: 'tls',
  CCJS_CHECKSUM: 'checksum',
  CCJS_ALGORITHMS: 'algorithms',
  CCJS_TRACE: 'trace',
  CCJS_TRACE_FILE: 'traceFile',
};

const OPTION_KEYS = new Set<string>([...Object.keys(DEFAULTS), 'config', 'processRank', 'processCount', 'coordinator']);

export function resolveConfig(options: MasterOptions = {}, env: Readonly<Record<string, string | undefined>> = process.env): Config {
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new ConfigError(`unknown option '${key}'; valid options: ${[...OPTION_KEYS].join(', ')}`);
  }
  const fromFile = readConfigFile(options.config ?? env.CCJS_CONFIG);
  const fromEnv: Record<string, string> = {};
  for (const [variable, key] of Object.entries(ENVIRONMENT)) {
    const value = env[variable];
    if (value !== undefined && value !== '') fromEnv[key] = value;
  }
  const pick = <K extends keyof Config>(key: K, parse: (value: unknown, source: string) => Config[K]): Config[K] => {
    if (options[key as keyof MasterOptions] !== undefined) return parse(options[key as keyof MasterOptions], `option '${key}'`);
    const variable = Object.keys(ENVIRONMENT).find((name) => ENVIRONMENT[name] === key) as string;
    if (fromEnv[key] !== undefined) return parse(fromEnv[key], variable);
    if (fromFile.values[key] !== undefined) return parse(fromFile.values[key], `'${key}' in ${fromFile.path}`);
    return DEFAULTS[key];
  };
  return {
    transport: pick('transport', oneOf(TRANSPORTS)),
    devices: pick('devices', deviceRules),
    threads: pick('threads', positiveInteger),
    receiveWindow: pick('receiveWindow', (value, source) => {
      const window = integer(value, source, 4096);
      if (window > 0xffff_ffff) throw new ConfigError(`${source} must be below 4 GiB, got ${window}`);
      return window;
    }),
    sendBuffer: pick('sendBuffer', nonNegativeInteger),
    shmRingBytes: pick('shmRingBytes', (value, source) => {
      const bytes = integer(value, source, 65536);
      if ((bytes & (bytes - 1)) !== 0 || bytes > 1 << 30) throw new ConfigError(`${source} must be a power of two from 65536 to 2^30, got ${bytes}`);
      return bytes;
    }),
    shmSingleCopy: pick('shmSingleCopy', boolean),
    spinMicroseconds: pick('spinMicroseconds', nonNegativeInteger),
    watchdogMs: pick('watchdogMs', positiveInteger),
    host: pick('host', (value, source) => {
      if (typeof value !== 'string' || value === '') throw new ConfigError(`${source} must be a non-empty host identity, got ${JSON.stringify(value)}`);
      return value;
    }),
    serializer: pick('serializer', (value, source) => (typeof value === 'object' && value !== null ? (value as Serializer) : oneOf(SERIALIZERS)(value, source))),
    timeoutMs: pick('timeoutMs', positiveInteger),
    eagerLimit: pick('eagerLimit', nonNegativeInteger),
    outOfBandThreshold: pick('outOfBandThreshold', nonNegativeInteger),
    strictSerialization: pick('strictSerialization', boolean),
    interface: pick('interface', (value, source) => {
      if (typeof value !== 'string' || value === '') throw new ConfigError(`${source} must be an address or interface name, got ${JSON.stringify(value)}`);
      return value;
    }),
    tls: pick('tls', boolean),
    checksum: pick('checksum', boolean),
    abortOnError: pick('abortOnError', boolean),
    autoClose: pick('autoClose', boolean),
    collectives: pick('collectives', (value, source) => checkTable(value, source)),
    algorithms: pick('algorithms', (value, source) => {
      if (typeof value !== 'string') throw new ConfigError(`${source} must be a string like 'allReduce=ring,broadcast=mst'`);
      return parseForcedAlgorithms(value);
    }),
    trace: pick('trace', (value, source) => (typeof value === 'function' ? (value as TraceListener) : boolean(value, source) ? traceToStderr : undefined)),
    traceFile: pick('traceFile', (value, source) => {
      if (typeof value !== 'string' || value === '') throw new ConfigError(`${source} must be the path of the trace file to write, got ${JSON.stringify(value)}`);
      return path.resolve(value);
    }),
  };
}

interface ConfigFile {
  readonly path: string;
  readonly values: Record<string, unknown>;
}

function readConfigFile(explicit: string | undefined): ConfigFile {
  const file = explicit ?? path.resolve('ccjs.config.json');
  if (explicit === undefined && !fs.existsSync(file)) return { path: file, values: {} };
  let values: unknown;
  try {
    values = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`, { cause: error });
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  for (const key of Object.keys(values)) {
    if (!(FILE_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`unknown key '${key}' in config file ${file}; valid keys: ${FILE_KEYS.join(', ')}`);
    }
  }
  return { path: file, values: values as Record<string, unknown> };
}

function oneOf<T extends string>(choices: readonly T[]) {
  return (value: unknown, source: string): T => {
    if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
    throw new ConfigError(`${source} is ${JSON.stringify(value)}; valid values: ${choices.join(', ')}`);
  };
}

function integer(value: unknown, source: string, minimum: number): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < minimum) {
    throw new ConfigError(`${source} must be an integer >= ${minimum}, got ${JSON.stringify(value)}`);
  }
  return number;
}

function positiveInteger(value: unknown, source: string): number {
  return integer(value, source, 1);
}

function nonNegativeInteger(value: unknown, source: string): number {
  return integer(value, source, 0);
}

const DEVICE_CHOICES: readonly DeviceChoice[] = ['auto', 'local', 'tcp', 'shm', 'ucx'];

/** `{ host: 'tcp' }`, or CCJS_DEVICES='host=tcp,network=ucx'. */
function deviceRules(value: unknown, source: string): Partial<DeviceRules> {
  const entries =
    typeof value === 'string'
      ? value.split(',').map((entry) => {
          const [relation, device] = entry.split('=').map((part) => part.trim());
          if (device === undefined) throw new ConfigError(`${source} entry '${entry}' is not <relation>=<device>`);
          return [relation, device] as const;
        })
      : typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.entries(value)
        : undefined;
  if (entries === undefined) throw new ConfigError(`${source} must be an object like { "host": "tcp" } or a string like 'host=tcp'`);
  const rules: Partial<Record<string, DeviceChoice>> = {};
  for (const [relation, device] of entries) {
    if (!(RELATIONS as readonly string[]).includes(relation as string)) throw new ConfigError(`${source}: unknown relation '${relation}'; valid: ${RELATIONS.join(', ')}`);
    rules[relation as string] = oneOf(DEVICE_CHOICES)(device, `${source}.${relation}`);
  }
  return rules as Partial<DeviceRules>;
}

function boolean(value: unknown, source: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${source} must be true or false, got ${JSON.stringify(value)}`);
}
