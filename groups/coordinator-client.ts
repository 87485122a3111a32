/**
 * An endpoint's side of the coordinator connection: it introduces the endpoint, learns the world
 * (every endpoint with its address records), and turns join/get/abort/dump into control messages
 * and their answers.
 */
import net from 'node:net';
import { ControlChannel } from './control-channel.js';
import type { ControlMessage, Hello, MemberAddress } from './control-channel.js';
import type { World } from '../src/engine/endpoints.js';
import { ConfigError, GroupError, PeerLostError, TimeoutError } from '../src/errors.js';

export interface GroupDescription {
  readonly name: string;
  readonly context: number;
  readonly members: readonly MemberAddress[];
}

export interface CoordinatorEvents {
  lost(endpointRank: number, message: string): void;
  abort(endpointRank: number, message: string): void;
  /** Another endpoint's watchdog asks every endpoint to log its pending calls. */
  dump(endpointRank: number): void;
}

interface PendingGet {
  readonly resolve: (group: GroupDescription) => void;
  readonly reject: (error: Error) => void;
}

const RETRY_MS = 50;

export class CoordinatorClient {
  /** Groups known to be active, so that joining one fails at once. */
  readonly activeGroups = new Set<string>();
  private readonly pendingGets = new Map<string, PendingGet>();
  /** Joins the coordinator refused, reported by the next getGroup of that group. */
  private readonly refusedJoins = new Map<string, string>();
  private world: { resolve: (world: World) => void; reject: (error: Error) => void } | undefined;
  private saidBye = false;
  /** Set by `connect` once the socket is up. */
  private channel: ControlChannel | undefined;

  private constructor(
    private readonly channelSocket: net.Socket,
    private readonly events: CoordinatorEvents,
  ) {}

  /**
   * Connects (retrying until `timeoutMs`: process 0 may not listen yet), says hello, and
   * resolves with the client and the job's world once every process has said hello.
   */
  static async connect(host: string, port: number, hello: Hello, timeoutMs: number, events: CoordinatorEvents): Promise<{ client: CoordinatorClient; world: World }> {
    const deadline = Date.now() + timeoutMs;
    const socket = await connectWithRetry(host, port, deadline);
    const client = new CoordinatorClient(socket, events);
    const channel = new ControlChannel(socket, (message) => client.handle(message));
    client.channel = channel;
    const world = new Promise<World>((resolve, reject) => {
      client.world = { resolve, reject };
      const endpoints = hello.processCount * hello.threadCount;
      const what = hello.threadCount === 1 ? `process ${hello.processRank}: not all ${hello.processCount} processes` : `process ${hello.processRank} thread ${hello.threadRank}: not all ${endpoints} endpoints`;
      const timer = setTimeout(() => reject(new TimeoutError(`${what} reached the coordinator at ${host}:${port} within ${timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
      timer.unref();
      socket.once('close', () => reject(new PeerLostError(`process ${hello.processRank}: the coordinator at ${host}:${port} closed the connection while the job was starting`, 0)));
    });
    socket.on('error', () => {});
    socket.on('close', () => client.closed());
    channel.send({ type: 'hello', ...hello });
    return { client, world: await world };
  }

  join(group: string, localId: number, order: number, key: number[] = []): void {
    this.channel?.send({ type: 'join', group, localId, order, key });
  }

  getGroup(group: string, size: number, timeoutMs: number): Promise<GroupDescription> {
    const refused = this.refusedJoins.get(group);
    if (refused) return Promise.reject(new GroupError(refused));
    return new Promise((resolve, reject) => {
      this.pendingGets.set(group, { resolve, reject });
      this.channel?.send({ type: 'get', group, size, timeoutMs });
    });
  }

  abort(message: string, endpointRank: number): void {
    this.channel?.send({ type: 'abort', endpointRank, message });
  }

  /** Asks every other endpoint to log its pending calls (the watchdog fired here). */
  dump(endpointRank: number): void {
    this.channel?.send({ type: 'dump', endpointRank });
  }

  /** Resolves once everything sent so far is handed to the kernel (bounded: we may be dying). */
  flush(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 1000);
      this.channelSocket.write(Buffer.alloc(0), () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Says goodbye and closes the connection once the coordinator has the message. */
  async bye(): Promise<void> {
    this.saidBye = true;
    this.channel?.send({ type: 'bye' });
    await new Promise<void>((resolve) => {
      if (this.channelSocket.destroyed) resolve();
      else this.channelSocket.end(() => resolve());
    });
  }

  private handle(message: ControlMessage): void {
    switch (message.type) {
      case 'world':
        this.world?.resolve({ jobId: message.jobId, processCount: message.processCount, threadCount: message.threadCount, endpoints: message.endpoints });
        return;
      case 'refused':
        this.world?.reject(new ConfigError(`the coordinator refused this process: ${message.message}`));
        return;
      case 'group':
        this.activeGroups.add(message.group);
        this.settle(message.group)?.resolve({ name: message.group, context: message.context, members: message.members });
        return;
      case 'groupError': {
        const pending = this.settle(message.group);
        if (pending) pending.reject(message.timeout ? new TimeoutError(message.message) : new GroupError(message.message));
        else this.refusedJoins.set(message.group, message.message);
        return;
      }
      case 'active':
        this.activeGroups.add(message.group);
        return;
      case 'lost':
        this.events.lost(message.endpointRank, message.message);
        return;
      case 'abort':
        this.events.abort(message.endpointRank, message.message);
        return;
      case 'dump':
        this.events.dump(message.endpointRank);
        return;
      default:
        return;
    }
  }

  private settle(group: string): PendingGet | undefined {
    const pending = this.pendingGets.get(group);
    this.pendingGets.delete(group);
    return pending;
  }

  private closed(): void {
    if (this.saidBye) return;
    const message = 'the coordinator (process 0) was lost';
    for (const [group, pending] of this.pendingGets) pending.reject(new PeerLostError(`getGroup('${group}') failed: ${message}`, 0));
    this.pendingGets.clear();
    this.events.lost(0, message);
  }
}

async function connectWithRetry(host: string, port: number, deadline: number): Promise<net.Socket> {
  for (;;) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect({ host, port, noDelay: true });
        socket.once('connect', () => {
          socket.removeAllListeners('error');
          resolve(socket);
        });
        socket.once('error', reject);
      });
    } catch (error) {
      if (Date.now() + RETRY_MS > deadline) {
        throw new TimeoutError(`cannot reach the coordinator at ${host}:${port} (${(error as Error).message}); is process 0 running?`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
