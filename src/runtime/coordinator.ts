/**
 * The group registry, hosted by endpoint 0 (the main thread of process 0; CCJ 2.1): it registers
 * every endpoint with its address records and hands each the world, collects joins, forms each
 * group once `numberOfMembers` have joined, gives it a job-wide context id and the same rank order
 * everywhere (endpoint rank, then addMember order), and relays losses, aborts and watchdog dumps.
 * Every connection authenticates first (src/security/handshake.ts); every message is checked
 * (src/runtime/control-messages.ts) before use, and a bad one closes that connection only. Only
 * endpoints it admitted (a valid hello) can be reported lost.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { ControlChannel } from './control-channel.js';
import type { FromCoordinator, MemberAddress, ToCoordinator } from './control-channel.js';
import { MAX_CONTROL_FRAME_BYTES, parseToCoordinator } from './control-messages.js';
import type { EndpointInfo } from '../engine/endpoints.js';
import { endpointLabel } from '../engine/endpoints.js';
import { TimeoutError, TransportError } from '../base/errors.js';
import { Gatekeeper, handshakeDeadline } from '../security/handshake.js';

type Channel = ControlChannel<ToCoordinator, FromCoordinator>;

/** Connections still authenticating at once; a flood beyond it drops the oldest. */
const MAX_UNAUTHENTICATED = 256;
/** Endpoints named in one message at most. */
const MAX_NAMED = 16;

/** An endpoint aborted the job: its member failed, as the message says. */
export interface JobAbort {
  readonly endpointRank: number;
  readonly message: string;
}

interface Join {
  readonly endpointRank: number;
  readonly localId: number;
  readonly order: number;
  readonly key: number[];
}

interface GroupRecord {
  readonly joins: Join[];
  size: number | undefined;
  formed: { context: number; members: MemberAddress[] } | undefined;
  failure: string | undefined;
  readonly waiters: Map<number, NodeJS.Timeout>;
}

export class Coordinator {
  private readonly channels = new Map<number, Channel>();
  private readonly endpoints: (EndpointInfo | undefined)[];
  private readonly groups = new Map<string, GroupRecord>();
  private readonly gone = new Set<number>();
  /** The abort that came first: the job's one cause (later aborts are echoes of it, or too late). */
  private firstAbort: JobAbort | undefined;
  /** Names the job's world (and process 0's heartbeat channel). */
  readonly jobId = randomBytes(8).toString('hex');
  private readonly size: number;
  private nextContext = 1;
  private allGone: () => void = () => {};
  private readonly allGonePromise: Promise<void>;
  private readonly gatekeeper: Gatekeeper;

  private constructor(
    private readonly server: net.Server,
    private readonly processCount: number,
    private readonly threadCount: number,
    private readonly jobKey: string,
    secret: Buffer,
    timeoutMs: number,
  ) {
    this.size = processCount * threadCount;
    this.endpoints = new Array(this.size).fill(undefined);
    this.allGonePromise = new Promise((resolve) => {
      this.allGone = resolve;
    });
    this.gatekeeper = new Gatekeeper({ what: 'the coordinator', secret, deadlineMs: handshakeDeadline(timeoutMs), maxPending: MAX_UNAUTHENTICATED, admit: (socket) => this.accept(socket) });
    server.on('connection', (socket) => this.gatekeeper.accept(socket));
  }

  /** Listens on `host` only (the job's chosen interface) for the endpoints of a job that knows `secret`. */
  static async start(host: string, port: number, processCount: number, threadCount: number, jobKey: string, secret: Buffer, timeoutMs: number): Promise<Coordinator> {
    const server = net.createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        const advice =
          error.code === 'EADDRINUSE'
            ? `; port ${port} is taken by another program: set CCJS_COORDINATOR=host:port to a free port of this host (the same for every process), or CCJS_COORDINATOR=file:<path> on one host or a shared file system to let process 0 choose one`
            : '';
        reject(new TransportError(`coordinator cannot listen on ${host}:${port}: ${error.message}${advice}`, { cause: error }));
      });
      server.listen(port, host, () => resolve());
    });
    return new Coordinator(server, processCount, threadCount, jobKey, secret, timeoutMs);
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Resolves once every endpoint said goodbye or was lost, then stops listening. */
  async close(): Promise<void> {
    await this.allGonePromise;
    this.stopWaiting();
    for (const channel of this.channels.values()) channel.socket.end();
    this.gatekeeper.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Stops at once (process 0 failed to start the job with `reason`): the endpoints still waiting
   * for the world are told that the coordinator gave up, and why.
   */
  async forceClose(reason: unknown): Promise<void> {
    const message = reason instanceof Error ? reason.message : String(reason);
    this.stopWaiting();
    for (const channel of this.channels.values()) {
      channel.send({ type: 'gaveUp', timeout: reason instanceof TimeoutError, message });
      channel.socket.end();
      // Ended gracefully so that the reason arrives; a peer that does not close its side is cut.
      setTimeout(() => channel.socket.destroy(), 1000).unref();
    }
    this.gatekeeper.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private stopWaiting(): void {
    for (const record of this.groups.values()) for (const timer of record.waiters.values()) clearTimeout(timer);
  }

  /**
   * The heartbeats found process `processRank` lost: none of its endpoints will say goodbye (a
   * stopped process keeps its connections open), and they are cut off.
   */
  processLost(processRank: number): void {
    for (let threadRank = 0; threadRank < this.threadCount; threadRank += 1) {
      const endpointRank = processRank * this.threadCount + threadRank;
      if (this.gone.has(endpointRank)) continue;
      this.leave(endpointRank);
      this.channels.get(endpointRank)?.socket.destroy();
    }
  }

  /**
   * The first endpoint to abort the job names its cause: every endpoint is told, itself too (it
   * reports the cause; the others say only that they stop). Later aborts are not passed on.
   * Returns the abort that came first (endpoint 0 calls it directly: it may exit before its own
   * message would come round).
   */
  abort(endpointRank: number, message: string): JobAbort {
    if (this.firstAbort !== undefined) return this.firstAbort;
    this.firstAbort = { endpointRank, message };
    this.broadcast({ type: 'abort', endpointRank, message });
    return this.firstAbort;
  }

  /** An authenticated connection: it must say hello before anything else. */
  private accept(socket: net.Socket): void {
    let endpointRank = -1;
    const channel: Channel = new ControlChannel(socket, {
      parse: (value) => parseToCoordinator(value, { processCount: this.processCount, threadCount: this.threadCount }),
      maxFrameBytes: MAX_CONTROL_FRAME_BYTES,
      onMessage: (message) => {
        if (endpointRank >= 0) this.handle(endpointRank, channel, message);
        else if (message.type === 'hello') endpointRank = this.hello(channel, message);
        else throw new TransportError(`a '${message.type}' message came before hello`);
      },
      onError: (error) => {
        const who = endpointRank >= 0 ? endpointLabel(endpointRank, this.threadCount) : `a peer that was not admitted (${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'})`;
        process.stderr.write(`ccjs: the coordinator closed its connection with ${who}: ${error.message}\n`);
      },
    });
    socket.on('close', () => {
      // Only an endpoint admitted on this very connection can be lost; a refused one never was.
      if (endpointRank < 0 || this.channels.get(endpointRank) !== channel || this.gone.has(endpointRank)) return;
      this.leave(endpointRank);
      const message = `${endpointLabel(endpointRank, this.threadCount)} was lost (its control connection closed without close())`;
      this.broadcast({ type: 'lost', endpointRank, message }, endpointRank);
    });
  }

  /** Registers an endpoint; returns its rank, or -1 when it was refused. */
  private hello(channel: Channel, message: Extract<ToCoordinator, { type: 'hello' }>): number {
    const rank = message.processRank * this.threadCount + message.threadRank;
    const refusal =
      message.jobKey !== this.jobKey
        ? 'refused: this coordinator serves another job'
        : message.processCount !== this.processCount || message.processRank >= this.processCount
          ? `process ${message.processRank} of ${message.processCount} does not fit this job of ${this.processCount} processes`
          : message.threadCount !== this.threadCount || message.threadRank >= this.threadCount
            ? `thread ${message.threadRank} of ${message.threadCount} does not fit this job of ${this.threadCount} threads per process`
            : this.channels.has(rank)
              ? `${endpointLabel(rank, this.threadCount)} has already joined this job`
              : undefined;
    if (refusal !== undefined) {
      channel.send({ type: 'refused', message: refusal });
      channel.socket.end();
      return -1;
    }
    this.channels.set(rank, channel);
    const { processRank, threadRank, host, hostname, machine, pid, receiveWindow, addresses } = message;
    this.endpoints[rank] = { rank, processRank, threadRank, host, hostname, machine, pid, receiveWindow, addresses };
    if (this.channels.size === this.size) {
      this.broadcast({ type: 'world', jobId: this.jobId, processCount: this.processCount, threadCount: this.threadCount, endpoints: this.endpoints as EndpointInfo[] });
    }
    return rank;
  }

  private handle(endpointRank: number, channel: Channel, message: ToCoordinator): void {
    switch (message.type) {
      case 'hello':
        throw new TransportError(`${endpointLabel(endpointRank, this.threadCount)} said hello twice`);
      case 'missing':
        channel.send({ type: 'missing', message: this.missing() });
        return;
      case 'join':
        this.join(endpointRank, message);
        return;
      case 'get':
        this.get(endpointRank, message);
        return;
      case 'abort':
        this.abort(endpointRank, message.message);
        return;
      case 'dump':
        this.broadcast({ type: 'dump', endpointRank }, endpointRank);
        return;
      case 'faulty':
        // The verdict of the endpoint that read the bad frame is the job's: every other endpoint, the culprit too, hears the same name.
        this.broadcast({ type: 'lost', endpointRank: message.endpointRank, message: message.message }, endpointRank);
        return;
      case 'bye':
        this.leave(endpointRank);
        return;
    }
  }

  /** Which endpoints have not said hello yet, for a world that did not form in time. */
  private missing(): string {
    const absent = [...this.endpoints.keys()].filter((rank) => !this.channels.has(rank));
    const unit = this.threadCount === 1 ? 'processes' : 'endpoints';
    return `${this.size - absent.length} of ${this.size} ${unit} reached it; missing: ${this.name(absent)}`;
  }

  /** Names endpoints, whole processes where all their endpoints are among them, at most MAX_NAMED. */
  private name(ranks: readonly number[]): string {
    const set = new Set(ranks);
    const names: string[] = [];
    for (const rank of ranks) {
      const first = rank - (rank % this.threadCount);
      const wholeProcess = [...Array(this.threadCount).keys()].every((thread) => set.has(first + thread));
      if (!wholeProcess) names.push(endpointLabel(rank, this.threadCount));
      else if (rank === first) names.push(`process ${rank / this.threadCount}`);
    }
    const more = names.length > MAX_NAMED ? ` and ${names.length - MAX_NAMED} more` : '';
    return names.slice(0, MAX_NAMED).join(', ') + more;
  }

  private record(group: string): GroupRecord {
    let record = this.groups.get(group);
    if (record === undefined) {
      record = { joins: [], size: undefined, formed: undefined, failure: undefined, waiters: new Map() };
      this.groups.set(group, record);
    }
    return record;
  }

  private join(endpointRank: number, message: Extract<ToCoordinator, { type: 'join' }>): void {
    const record = this.record(message.group);
    if (record.formed) {
      this.send(endpointRank, { type: 'groupError', group: message.group, timeout: false, message: `cannot join group '${message.group}': it is already active with ${record.formed.members.length} members` });
      return;
    }
    record.joins.push({ endpointRank, localId: message.localId, order: message.order, key: message.key });
    this.tryToForm(message.group, record);
  }

  private get(endpointRank: number, message: Extract<ToCoordinator, { type: 'get' }>): void {
    const record = this.record(message.group);
    const agreedSize = record.formed ? record.formed.members.length : record.size;
    if (agreedSize !== undefined && agreedSize !== message.size) {
      this.send(endpointRank, { type: 'groupError', group: message.group, timeout: false, message: `getGroup('${message.group}', ${message.size}) disagrees with getGroup('${message.group}', ${agreedSize}) called elsewhere` });
      return;
    }
    if (record.formed) {
      this.send(endpointRank, { type: 'group', group: message.group, ...record.formed });
      return;
    }
    if (record.failure) {
      this.send(endpointRank, { type: 'groupError', group: message.group, timeout: false, message: record.failure });
      return;
    }
    record.size = message.size;
    if (!record.waiters.has(endpointRank)) {
      const timer = setTimeout(() => {
        record.waiters.delete(endpointRank);
        this.send(endpointRank, {
          type: 'groupError',
          group: message.group,
          timeout: true,
          message: `group '${message.group}': only ${record.joins.length} of ${message.size} members joined within ${message.timeoutMs} ms${this.absentFrom(record)}`,
        });
      }, message.timeoutMs);
      record.waiters.set(endpointRank, timer);
    }
    this.tryToForm(message.group, record);
  }

  /** The endpoints from which no member joined (knowable: a group need not span every endpoint). */
  private absentFrom(record: GroupRecord): string {
    const joined = new Set(record.joins.map((join) => join.endpointRank));
    const absent = [...this.endpoints.keys()].filter((rank) => !joined.has(rank));
    return absent.length === 0 ? '' : `; no member joined from ${this.name(absent)}`;
  }

  private tryToForm(group: string, record: GroupRecord): void {
    if (record.size === undefined) return;
    if (record.joins.length > record.size) {
      record.failure = `group '${group}': ${record.joins.length} members joined, but getGroup asked for ${record.size}`;
      this.answerWaiters(record, { type: 'groupError', group, timeout: false, message: record.failure });
      return;
    }
    if (record.joins.length < record.size) return;
    // Ranks follow explicit keys (copyGroup, split), then endpoint rank, then addMember order.
    const sorted = [...record.joins].sort((a, b) => compareKeys(a.key, b.key) || a.endpointRank - b.endpointRank || a.order - b.order);
    record.formed = { context: this.nextContext, members: sorted.map((join) => [join.endpointRank, join.localId] as const) };
    // Contexts are u32 on the wire: wrap (never to 0) rather than fail after 2^32 − 1 groups.
    this.nextContext = (this.nextContext % 0xffff_ffff) + 1;
    this.answerWaiters(record, { type: 'group', group, ...record.formed });
    this.broadcast({ type: 'active', group, context: record.formed.context });
  }

  private answerWaiters(record: GroupRecord, message: FromCoordinator): void {
    for (const [endpointRank, timer] of record.waiters) {
      clearTimeout(timer);
      this.send(endpointRank, message);
    }
    record.waiters.clear();
  }

  private leave(endpointRank: number): void {
    this.gone.add(endpointRank);
    if (this.gone.size === this.size) this.allGone();
  }

  private send(endpointRank: number, message: FromCoordinator): void {
    this.channels.get(endpointRank)?.send(message);
  }

  private broadcast(message: FromCoordinator, except?: number): void {
    for (const [endpointRank, channel] of this.channels) if (endpointRank !== except && !this.gone.has(endpointRank)) channel.send(message);
  }
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}
