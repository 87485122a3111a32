/**
 * The group registry, hosted by process 0 (CCJ 2.1): it learns every process's data address,
 * collects joins, forms each group once `numberOfMembers` have joined, gives it a job-wide
 * context id and the same rank order everywhere, and relays losses and aborts.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { ControlChannel } from './control-channel.js';
import type { ControlMessage, MemberAddress } from './control-channel.js';
import { TransportError } from '../src/errors.js';

interface Join {
  readonly processRank: number;
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
  private readonly channels = new Map<number, ControlChannel>();
  private readonly addresses: ({ host: string; port: number } | undefined)[];
  private readonly groups = new Map<string, GroupRecord>();
  private readonly gone = new Set<number>();
  private readonly jobId = randomBytes(8).toString('hex');
  private nextContext = 1;
  private allGone: () => void = () => {};
  private readonly allGonePromise: Promise<void>;

  private constructor(
    private readonly server: net.Server,
    private readonly processCount: number,
    private readonly jobKey: string,
  ) {
    this.addresses = new Array(processCount).fill(undefined);
    this.allGonePromise = new Promise((resolve) => {
      this.allGone = resolve;
    });
    server.on('connection', (socket) => this.accept(socket));
  }

  static async start(host: string, port: number, processCount: number, jobKey: string): Promise<Coordinator> {
    const server = net.createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new TransportError(`coordinator cannot listen on ${host}:${port}: ${error.message}`, { cause: error })));
      server.listen(port, host, () => resolve());
    });
    return new Coordinator(server, processCount, jobKey);
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Resolves once every process said goodbye or was lost, then stops listening. */
  async close(): Promise<void> {
    await this.allGonePromise;
    for (const record of this.groups.values()) for (const timer of record.waiters.values()) clearTimeout(timer);
    for (const channel of this.channels.values()) channel.socket.end();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Stops at once (the job failed to start). */
  async forceClose(): Promise<void> {
    for (const channel of this.channels.values()) channel.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    let processRank = -1;
    const channel = new ControlChannel(socket, (message) => {
      if (message.type === 'hello') {
        processRank = message.processRank;
        this.hello(channel, message);
      } else if (processRank >= 0) {
        this.handle(processRank, message);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (processRank < 0 || this.gone.has(processRank)) return;
      this.leave(processRank);
      this.broadcast({ type: 'lost', processRank, message: `process ${processRank} was lost (its control connection closed without close())` }, processRank);
    });
  }

  private hello(channel: ControlChannel, message: Extract<ControlMessage, { type: 'hello' }>): void {
    const refusal =
      message.jobKey !== this.jobKey
        ? `the coordinator at this address serves job '${this.jobKey}', not job '${message.jobKey}'`
        : message.processCount !== this.processCount || message.processRank >= this.processCount
          ? `process ${message.processRank} of ${message.processCount} does not fit this job of ${this.processCount} processes`
          : this.channels.has(message.processRank)
            ? `process ${message.processRank} has already joined this job`
            : undefined;
    if (refusal !== undefined) {
      channel.send({ type: 'refused', message: refusal });
      channel.socket.end();
      return;
    }
    this.channels.set(message.processRank, channel);
    this.addresses[message.processRank] = { host: message.host, port: message.port };
    if (this.channels.size === this.processCount) {
      const addresses = this.addresses as { host: string; port: number }[];
      this.broadcast({ type: 'world', jobId: this.jobId, addresses });
    }
  }

  private handle(processRank: number, message: ControlMessage): void {
    switch (message.type) {
      case 'join':
        this.join(processRank, message);
        return;
      case 'get':
        this.get(processRank, message);
        return;
      case 'abort':
        this.broadcast({ type: 'abort', processRank, message: message.message }, processRank);
        return;
      case 'bye':
        this.leave(processRank);
        return;
      default:
        return;
    }
  }

  private record(group: string): GroupRecord {
    let record = this.groups.get(group);
    if (record === undefined) {
      record = { joins: [], size: undefined, formed: undefined, failure: undefined, waiters: new Map() };
      this.groups.set(group, record);
    }
    return record;
  }

  private join(processRank: number, message: Extract<ControlMessage, { type: 'join' }>): void {
    const record = this.record(message.group);
    if (record.formed) {
      this.send(processRank, { type: 'groupError', group: message.group, timeout: false, message: `cannot join group '${message.group}': it is already active with ${record.formed.members.length} members` });
      return;
    }
    record.joins.push({ processRank, localId: message.localId, order: message.order, key: message.key });
    this.tryToForm(message.group, record);
  }

  private get(processRank: number, message: Extract<ControlMessage, { type: 'get' }>): void {
    const record = this.record(message.group);
    const agreedSize = record.formed ? record.formed.members.length : record.size;
    if (agreedSize !== undefined && agreedSize !== message.size) {
      this.send(processRank, { type: 'groupError', group: message.group, timeout: false, message: `getGroup('${message.group}', ${message.size}) disagrees with getGroup('${message.group}', ${agreedSize}) called elsewhere` });
      return;
    }
    if (record.formed) {
      this.send(processRank, { type: 'group', group: message.group, ...record.formed });
      return;
    }
    if (record.failure) {
      this.send(processRank, { type: 'groupError', group: message.group, timeout: false, message: record.failure });
      return;
    }
    record.size = message.size;
    if (!record.waiters.has(processRank)) {
      const timer = setTimeout(() => {
        record.waiters.delete(processRank);
        this.send(processRank, {
          type: 'groupError',
          group: message.group,
          timeout: true,
          message: `group '${message.group}': only ${record.joins.length} of ${message.size} members joined within ${message.timeoutMs} ms`,
        });
      }, message.timeoutMs);
      record.waiters.set(processRank, timer);
    }
    this.tryToForm(message.group, record);
  }

  private tryToForm(group: string, record: GroupRecord): void {
    if (record.size === undefined) return;
    if (record.joins.length > record.size) {
      record.failure = `group '${group}': ${record.joins.length} members joined, but getGroup asked for ${record.size}`;
      this.answerWaiters(record, { type: 'groupError', group, timeout: false, message: record.failure });
      return;
    }
    if (record.joins.length < record.size) return;
    // Ranks follow explicit keys (copyGroup, split), then process rank, then addMember order.
    const sorted = [...record.joins].sort((a, b) => compareKeys(a.key, b.key) || a.processRank - b.processRank || a.order - b.order);
    record.formed = { context: this.nextContext++, members: sorted.map((join) => [join.processRank, join.localId] as const) };
    this.answerWaiters(record, { type: 'group', group, ...record.formed });
    this.broadcast({ type: 'active', group });
  }

  private answerWaiters(record: GroupRecord, message: ControlMessage): void {
    for (const [processRank, timer] of record.waiters) {
      clearTimeout(timer);
      this.send(processRank, message);
    }
    record.waiters.clear();
  }

  private leave(processRank: number): void {
    this.gone.add(processRank);
    if (this.gone.size === this.processCount) this.allGone();
  }

  private send(processRank: number, message: ControlMessage): void {
    this.channels.get(processRank)?.send(message);
  }

  private broadcast(message: ControlMessage, except?: number): void {
    for (const [processRank, channel] of this.channels) if (processRank !== except && !this.gone.has(processRank)) channel.send(message);
  }
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
