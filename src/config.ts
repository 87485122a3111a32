/**
 * Configuration: `create()` options, then CCJS_* environment variables, then the config file
 * (ccjs.config.json in the working directory, or CCJS_CONFIG / the `config` option), then
 * defaults (API.md, "Configuration precedence"). Unknown keys and bad values are ConfigErrors.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './errors.js';
import type { Serializer } from './serialization/serializer.js';
import { checkTable, parseForcedAlgorithms } from './collectives/selection.js';
import type { SelectionTable } from './collectives/selection.js';
import type { CollectiveName } from './collectives/algorithms.js';
import { RELATIONS } from './engine/endpoints.js';
import type { DeviceChoice, DeviceRules } from './engine/endpoints.js';

export const TRANSPORTS = ['auto', 'local', 'tcp', 'shm', 'ucx'] as const;
export type TransportName = (typeof TRANSPORTS)[number];
export const SERIALIZERS = ['msgpack', 'v8'] as const;
export type SerializerName = (typeof SERIALIZERS)[number];

export interface MasterOptions {
  /** 'auto': the best device for each pair of endpoints; a device name: that device wherever it can serve. */
  transport?: TransportName;
  /** Per-relation device choices overriding `transport`, e.g. { host: 'tcp' } (CCJS_DEVICES='host=tcp'). */
  devices?: Partial<DeviceRules>;
  /** Endpoints per process: the process runs the script on its main thread and in threads − 1 worker threads (CCJS_THREADS). */
  threads?: number;
  serializer?: SerializerName | Serializer;
  /** Bound for group formation, connecting, and detecting a lost peer (ms). */
  timeoutMs?: number;
  /** Path of a config file. */
  config?: string;
  /** Messages above this many bytes use the rendezvous protocol. */
  eagerLimit?: number;
  /** Bytes of unmatched messages each peer endpoint may leave here; a sender that would exceed it waits. */
  receiveWindow?: number;
  /** Bytes of large sendAsync data copied at the sender while waiting for receivers; past it sendAsync waits. */
  sendBuffer?: number;
  /** Bytes of each shared-memory ring (one per ordered pair of endpoints on a host; a power of two). */
  shmRingBytes?: number;
  /** How long a waiting call spins on polling devices before it sleeps, in µs (0: never). */
  spinMicroseconds?: number;
  /** Log every endpoint's pending calls once when a call has waited this long (ms; off when unset). */
  watchdogMs?: number;
  /** Host identity for "same host" decisions (CCJS_HOST); default: host name + boot id. */
  host?: string;
  /** Typed arrays nested in an object travel out of band from this many bytes on. */
  outOfBandThreshold?: number;
  /** Reject instances of unregistered classes instead of sending them as plain objects. */
  strictSerialization?: boolean;
  /** Address the data device listens on (CCJS_INTERFACE). */
  interface?: string;
  /** An exception escaping a member's run() ends the process (true) or rejects start() (false). */
  abortOnError?: boolean;
  /** Close the master once every member added in this process is done. */
  autoClose?: boolean;
  /** Algorithm selection rules per collective (the config file's "collectives" key). */
  collectives?: SelectionTable;
  /** One algorithm per collective, e.g. 'allReduce=ring,broadcast=mst' (CCJS_ALGORITHMS). */
  algorithms?: string;
  /** Report the algorithm each collective call runs: true prints to stderr (CCJS_TRACE=1), a function receives the lines. */
  trace?: boolean | TraceListener;
  /** Override what the launcher says (for embedding several processes' masters in one). */
  processRank?: number;
  processCount?: number;
  coordinator?: string;
}

export interface Config {
  readonly transport: TransportName;
  readonly devices: Partial<DeviceRules>;
  readonly threads: number;
  readonly receiveWindow: number;
  readonly sendBuffer: number;
  readonly shmRingBytes: number;
  readonly spinMicroseconds: number;
  readonly watchdogMs: number | undefined;
  readonly host: string | undefined;
  readonly serializer: SerializerName | Serializer;
  readonly timeoutMs: number;
  readonly eagerLimit: number;
  readonly outOfBandThreshold: number;
  readonly strictSerialization: boolean;
  readonly interface: string | undefined;
  readonly abortOnError: boolean;
  readonly autoClose: boolean;
  readonly collectives: SelectionTable | undefined;
  readonly algorithms: Partial<Record<CollectiveName, string>>;
  readonly trace: TraceListener | undefined;
}

export type TraceListener = (line: string) => void;

const traceToStderr: TraceListener = (line) => void process.stderr.write(`${line}\n`);

const DEFAULTS: Config = {
  transport: 'auto',
  devices: {},
  threads: 1,
  receiveWindow: 4 * 1024 * 1024,
  sendBuffer: 64 * 1024 * 1024,
  shmRingBytes: 512 * 1024,
  // About two wake-ups of a blocked thread here (20-100 µs each): a shorter spin lets a ping-pong
  // fall into both sides sleeping (UCX's wake-up path is the slowest); the budget halves anyway
  // while a peer computes (src/engine/progress.ts).
  spinMicroseconds: 500,
  watchdogMs: undefined,
  host: undefined,
  serializer: 'msgpack',
  timeoutMs: 60_000,
  eagerLimit: 128 * 1024,
  outOfBandThreshold: 1024,
  strictSerialization: false,
  interface: undefined,
  abortOnError: true,
  autoClose: true,
  collectives: undefined,
  algorithms: {},
  trace: undefined,
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
  'spinMicroseconds',
  'watchdogMs',
  'outOfBandThreshold',
  'strictSerialization',
  'interface',
  'collectives',
  'algorithms',
  'trace',
] as const;

const ENVIRONMENT: Record<string, keyof Config> = {
  CCJS_TRANSPORT: 'transport',
  CCJS_DEVICES: 'devices',
  CCJS_THREADS: 'threads',
  CCJS_RECEIVE_WINDOW: 'receiveWindow',
  CCJS_SEND_BUFFER: 'sendBuffer',
  CCJS_SHM_RING_BYTES: 'shmRingBytes',
  CCJS_SPIN_US: 'spinMicroseconds',
  CCJS_WATCHDOG_MS: 'watchdogMs',
  CCJS_HOST: 'host',
  CCJS_SERIALIZER: 'serializer',
  CCJS_TIMEOUT_MS: 'timeoutMs',
  CCJS_EAGER_LIMIT: 'eagerLimit',
  CCJS_OOB_THRESHOLD: 'outOfBandThreshold',
  CCJS_STRICT_SERIALIZATION: 'strictSerialization',
  CCJS_INTERFACE: 'interface',
  CCJS_ALGORITHMS: 'algorithms',
  CCJS_TRACE: 'trace',
};

const OPTION_KEYS = new Set<string>([...Object.keys(DEFAULTS), 'config', 'processRank', 'processCount', 'coordinator']);

export function resolveConfig(options: MasterOptions = {}, env: NodeJS.ProcessEnv = process.env): Config {
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
    abortOnError: pick('abortOnError', boolean),
    autoClose: pick('autoClose', boolean),
    collectives: pick('collectives', (value, source) => checkTable(value, source)),
    algorithms: pick('algorithms', (value, source) => {
      if (typeof value !== 'string') throw new ConfigError(`${source} must be a string like 'allReduce=ring,broadcast=mst'`);
      return parseForcedAlgorithms(value);
    }),
    trace: pick('trace', (value, source) => (typeof value === 'function' ? (value as TraceListener) : boolean(value, source) ? traceToStderr : undefined)),
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
