/**
 * Checks every control message before it is used: its type, the types of its fields, integer
 * ranges (ranks within the job), and bounds on strings and arrays. Whatever a peer sends (a bug,
 * a fuzzer, a member gone wrong), the coordinator and the endpoints see only messages of these
 * shapes; anything else is a TransportError, which closes that one connection.
 */
import { encode } from '@msgpack/msgpack';
import type { EndpointInfo } from '../engine/endpoints.js';
import { TransportError } from '../base/errors.js';
import type { FromCoordinator, MemberAddress, ToCoordinator } from './control-channel.js';

/** Frames the coordinator accepts: far above any real message except the world, which it only sends. */
export const MAX_CONTROL_FRAME_BYTES = 1 << 20;
/** Group names, host names, job keys. */
const MAX_NAME_LENGTH = 4096;
/** Abort and error messages carry stack traces. */
const MAX_TEXT_LENGTH = 256 * 1024;
/** An endpoint's address records (tcp, shm, ucx), as encoded. */
const MAX_ADDRESS_BYTES = 16 * 1024;
/** Ordering keys of copyGroup and split. */
const MAX_KEY_LENGTH = 16;
const MAX_INT32 = 0x7fff_ffff;
const MAX_UINT32 = 0xffff_ffff;
/** setTimeout's limit. */
const MAX_TIMEOUT_MS = MAX_INT32;

/** The largest world message for a job of `endpoints` endpoints (the endpoints' side accepts that much). */
export function worldFrameLimit(endpoints: number): number {
  return Math.max(MAX_CONTROL_FRAME_BYTES, 64 * 1024 + endpoints * (MAX_ADDRESS_BYTES + 4 * MAX_NAME_LENGTH));
}

type Fields = Readonly<Record<string, unknown>>;

function bad(what: string): TransportError {
  return new TransportError(`bad control message: ${what}`);
}

/** A short, safe description of a value for error messages. */
function describe(value: unknown): string {
  if (typeof value === 'string') return `a string of length ${value.length}`;
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (value instanceof Uint8Array) return `${value.byteLength} bytes`;
  if (typeof value === 'number') return String(value);
  return value === null ? 'null' : typeof value;
}

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array) && !(value instanceof Date);
}

class Reader {
  constructor(
    private readonly fields: Fields,
    private readonly where: string,
  ) {}

  integer(name: string, min: number, max: number): number {
    const value = this.fields[name];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw bad(`${this.where}.${name} must be an integer in ${min}..${max}, got ${describe(value)}`);
    }
    return value;
  }

  string(name: string, maxLength: number): string {
    const value = this.fields[name];
    if (typeof value !== 'string' || value.length > maxLength) throw bad(`${this.where}.${name} must be a string of at most ${maxLength} characters, got ${describe(value)}`);
    return value;
  }

  boolean(name: string): boolean {
    const value = this.fields[name];
    if (typeof value !== 'boolean') throw bad(`${this.where}.${name} must be a boolean, got ${describe(value)}`);
    return value;
  }

  array(name: string, maxLength: number): readonly unknown[] {
    const value = this.fields[name];
    if (!Array.isArray(value) || value.length > maxLength) throw bad(`${this.where}.${name} must be an array of at most ${maxLength} elements, got ${describe(value)}`);
    return value;
  }

  record(name: string, maxEncodedBytes: number): Record<string, unknown> {
    const value = this.fields[name];
    if (!isRecord(value)) throw bad(`${this.where}.${name} must be a map, got ${describe(value)}`);
    if (encode(value).byteLength > maxEncodedBytes) throw bad(`${this.where}.${name} is larger than ${maxEncodedBytes} bytes`);
    return value as Record<string, unknown>;
  }
}

function typeOf(value: unknown, side: string): { type: string; read: Reader } {
  if (!isRecord(value)) throw bad(`${side} sent ${describe(value)}, not a map`);
  const type = value.type;
  if (typeof type !== 'string') throw bad(`${side} sent a message without a type`);
  return { type: type.slice(0, 32), read: new Reader(value, type.slice(0, 32)) };
}

/** The job's shape, which bounds ranks. */
export interface JobShape {
  readonly processCount: number;
  readonly threadCount: number;
}

/** A message from an endpoint, checked against the job's shape. */
export function parseToCoordinator(value: unknown, job: JobShape): ToCoordinator {
  const endpoints = job.processCount * job.threadCount;
  const { type, read } = typeOf(value, 'an endpoint');
  switch (type) {
    case 'hello':
      return {
        type,
        processRank: read.integer('processRank', 0, MAX_INT32),
        processCount: read.integer('processCount', 1, MAX_INT32),
        threadRank: read.integer('threadRank', 0, MAX_INT32),
        threadCount: read.integer('threadCount', 1, MAX_INT32),
        jobKey: read.string('jobKey', MAX_NAME_LENGTH),
        ...hostAndContact(read),
      };
    case 'join': {
      const key = read.array('key', MAX_KEY_LENGTH);
      if (!key.every((element) => typeof element === 'number' && Number.isSafeInteger(element))) throw bad('join.key must hold safe integers');
      return { type, group: groupName(read), localId: read.integer('localId', 0, MAX_INT32), order: read.integer('order', 0, Number.MAX_SAFE_INTEGER), key: key as number[] };
    }
    case 'get':
      return { type, group: groupName(read), size: read.integer('size', 1, MAX_INT32), timeoutMs: read.integer('timeoutMs', 0, MAX_TIMEOUT_MS) };
    case 'abort':
    case 'faulty':
      return { type, endpointRank: read.integer('endpointRank', 0, endpoints - 1), message: read.string('message', MAX_TEXT_LENGTH) };
    case 'dump':
      return { type, endpointRank: read.integer('endpointRank', 0, endpoints - 1) };
    case 'missing':
    case 'bye':
      return { type };
    default:
      throw bad(`an endpoint sent a message of unknown type '${type}'`);
  }
}

/** A message from the coordinator, checked against the job's shape as this endpoint knows it. */
export function parseFromCoordinator(value: unknown, job: JobShape): FromCoordinator {
  const endpoints = job.processCount * job.threadCount;
  const { type, read } = typeOf(value, 'the coordinator');
  switch (type) {
    case 'refused':
    case 'missing':
      return { type, message: read.string('message', MAX_TEXT_LENGTH) };
    case 'gaveUp':
      return { type, timeout: read.boolean('timeout'), message: read.string('message', MAX_TEXT_LENGTH) };
    case 'world': {
      const world = read.array('endpoints', endpoints);
      if (world.length !== endpoints) throw bad(`world.endpoints holds ${world.length} endpoints, not ${endpoints}`);
      return {
        type,
        jobId: read.string('jobId', MAX_NAME_LENGTH),
        processCount: read.integer('processCount', job.processCount, job.processCount),
        threadCount: read.integer('threadCount', job.threadCount, job.threadCount),
        endpoints: world.map((entry, rank) => endpointInfo(entry, rank, job)),
      };
    }
    case 'group':
      return {
        type,
        group: groupName(read),
        context: read.integer('context', 1, MAX_UINT32),
        members: read.array('members', MAX_INT32).map((member) => memberAddress(member, endpoints)),
      };
    case 'groupError':
      return { type, group: groupName(read), timeout: read.boolean('timeout'), message: read.string('message', MAX_TEXT_LENGTH) };
    case 'active':
      return { type, group: groupName(read), context: read.integer('context', 1, MAX_UINT32) };
    case 'lost':
    case 'abort':
      return { type, endpointRank: read.integer('endpointRank', 0, endpoints - 1), message: read.string('message', MAX_TEXT_LENGTH) };
    case 'dump':
      return { type, endpointRank: read.integer('endpointRank', 0, endpoints - 1) };
    default:
      throw bad(`the coordinator sent a message of unknown type '${type}'`);
  }
}

function groupName(read: Reader): string {
  return read.string('group', MAX_NAME_LENGTH);
}

function endpointInfo(value: unknown, rank: number, job: JobShape): EndpointInfo {
  if (!isRecord(value)) throw bad(`world.endpoints[${rank}] must be a map, got ${describe(value)}`);
  const read = new Reader(value, `world.endpoints[${rank}]`);
  const processRank = Math.floor(rank / job.threadCount);
  const threadRank = rank % job.threadCount;
  return {
    rank: read.integer('rank', rank, rank),
    processRank: read.integer('processRank', processRank, processRank),
    threadRank: read.integer('threadRank', threadRank, threadRank),
    ...hostAndContact(read),
  };
}

/** Where an endpoint runs and how to reach it: what its hello says and the world repeats. */
function hostAndContact(read: Reader): Omit<EndpointInfo, 'rank' | 'processRank' | 'threadRank'> {
  return {
    host: read.string('host', MAX_NAME_LENGTH),
    hostname: read.string('hostname', MAX_NAME_LENGTH),
    machine: read.string('machine', MAX_NAME_LENGTH),
    pid: read.integer('pid', 0, MAX_INT32),
    receiveWindow: read.integer('receiveWindow', 1, Number.MAX_SAFE_INTEGER),
    addresses: read.record('addresses', MAX_ADDRESS_BYTES),
  };
}

function memberAddress(value: unknown, endpoints: number): MemberAddress {
  if (!Array.isArray(value) || value.length !== 2) throw bad(`group.members must hold [endpointRank, localId] pairs, got ${describe(value)}`);
  const [endpointRank, localId] = value as unknown[];
  if (typeof endpointRank !== 'number' || !Number.isInteger(endpointRank) || endpointRank < 0 || endpointRank >= endpoints) throw bad(`group.members names endpoint ${describe(endpointRank)}, not one of 0..${endpoints - 1}`);
  if (typeof localId !== 'number' || !Number.isInteger(localId) || localId < 0 || localId > MAX_INT32) throw bad(`group.members names local member ${describe(localId)}`);
  return [endpointRank, localId];
}
