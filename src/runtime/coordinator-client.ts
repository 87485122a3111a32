/**
 * An endpoint's side of the coordinator connection: it introduces the endpoint, learns the world
 * (every endpoint with its address records), and turns join/get/abort/dump into control messages
 * and their answers. The connection authenticates first, and what the coordinator sends is checked
 * (src/runtime/control-messages.ts) before use.
 */
import net from 'node:net';
import { ControlChannel } from './control-channel.js';
import type { FromCoordinator, Hello, MemberAddress, ToCoordinator } from './control-channel.js';
import { parseFromCoordinator, worldFrameLimit } from './control-messages.js';
import type { World } from '../engine/endpoints.js';
import { ConfigError, GroupError, PeerLostError, TimeoutError, TransportError } from '../base/errors.js';
import { HandshakeError, authenticate, handshakeDeadline } from '../security/handshake.js';

export interface GroupDescription {
  readonly name: string;
  readonly context: number;
  readonly members: readonly MemberAddress[];
}

export interface CoordinatorEvents {
  lost(endpointRank: number, message: string): void;
  /** A group formed job-wide with `context`. */
  formed(context: number): void;
  abort(endpointRank: number, message: string): void;
  /** Another endpoint's watchdog asks every endpoint to log its pending calls. */
  dump(endpointRank: number): void;
}

interface PendingGet {
  readonly resolve: (group: GroupDescription) => void;
  readonly reject: (error: Error) => void;
}

const RETRY_MS = 50;
/** How long a process whose world did not form waits for the coordinator to say who is missing. */
const MISSING_ANSWER_MS = 1000;

export class CoordinatorClient {
  /** Groups known to be active, so that joining one fails at once. */
  readonly activeGroups = new Set<string>();
  private readonly pendingGets = new Map<string, PendingGet>();
  /** Joins the coordinator refused, reported by the next getGroup of that group. */
  private readonly refusedJoins = new Map<string, string>();
  private world: { resolve: (world: World) => void; reject: (error: Error) => void } | undefined;
  /** The coordinator's answer to 'missing', awaited by a world that did not form in time. */
  private missingAnswer: ((message: string) => void) | undefined;
  /** Why the coordinator stopped before the world formed, as it said. */
  private gaveUp: Extract<FromCoordinator, { type: 'gaveUp' }> | undefined;
  /** A message from the coordinator that failed its check (the connection was closed for it). */
  private badMessage: Error | undefined;
  private saidBye = false;
  /** Set by `connect` once the socket is up. */
  private channel: ControlChannel<FromCoordinator, ToCoordinator> | undefined;

  private constructor(
    private readonly channelSocket: net.Socket,
    private readonly events: CoordinatorEvents,
    /** host:port of the coordinator, for messages. */
    private readonly where: string,
    /** "process 2" or "process 2 thread 1", for messages. */
    private readonly who: string,
  ) {}

  /**
   * Connects (retrying until `timeoutMs`: process 0 may not listen yet), proves it knows the job
   * `secret`, says hello, and resolves with the client and the job's world once every process has
   * said hello.
   */
  static async connect(host: string, port: number, hello: Hello, timeoutMs: number, events: CoordinatorEvents, secret: Buffer): Promise<{ client: CoordinatorClient; world: World }> {
    const deadline = Date.now() + timeoutMs;
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const who = hello.threadCount === 1 ? `process ${hello.processRank}` : `process ${hello.processRank} thread ${hello.threadRank}`;
    const socket = await connectWithRetry(host, port, deadline);
    try {
      await authenticate(socket, secret, 'client', Math.max(1, Math.min(handshakeDeadline(timeoutMs), deadline - Date.now())));
    } catch (error) {
      if (error instanceof HandshakeError && !error.peerGreeted) {
        throw new ConfigError(
          `${who}: what listens at ${where} is not a ccjs coordinator (${error.message}): another program holds the coordinator's port, ` +
            "so process 0 cannot listen there; set CCJS_COORDINATOR=host:port to a free port of process 0's host, the same for every process",
          { cause: error },
        );
      }
      throw new ConfigError(
        `${who}: the coordinator at ${where} did not accept this process (${(error as Error).message}); ` +
          'every process of a job needs the same job secret (CCJS_SECRET or CCJS_SECRET_FILE; ccjrun, and launchers on one host, provide one)',
        { cause: error },
      );
    }
    const client = new CoordinatorClient(socket, events, where, who);
    const job = { processCount: hello.processCount, threadCount: hello.threadCount };
    const channel: ControlChannel<FromCoordinator, ToCoordinator> = new ControlChannel(socket, {
      parse: (value) => parseFromCoordinator(value, job),
      maxFrameBytes: worldFrameLimit(job.processCount * job.threadCount),
      onMessage: (message) => client.handle(message),
      onError: (error) => {
        client.badMessage = error;
        process.stderr.write(`ccjs: ${who} closed its connection to the coordinator at ${where}: ${error.message}\n`);
      },
    });
    client.channel = channel;
    const world = new Promise<World>((resolve, reject) => {
      client.world = { resolve, reject };
      const endpoints = hello.processCount * hello.threadCount;
      const what = hello.threadCount === 1 ? `not all ${hello.processCount} processes` : `not all ${endpoints} endpoints`;
      const timer = setTimeout(() => {
        // The coordinator knows who said hello: ask it (briefly) which ones are missing.
        const answered = new Promise<string>((answer) => {
          client.missingAnswer = answer;
          setTimeout(() => answer('the coordinator did not say which are missing'), MISSING_ANSWER_MS).unref();
        });
        channel.send({ type: 'missing' });
        void answered.then((missing) => reject(new TimeoutError(`${who}: ${what} reached the coordinator at ${where} within ${timeoutMs} ms: ${missing}`)));
      }, Math.max(0, deadline - Date.now()));
      timer.unref();
      socket.once('close', () => reject(client.startFailure()));
    });
    socket.on('error', () => {});
    socket.on('close', () => client.closed());
    channel.send({ type: 'hello', ...hello });
    return { client, world: await world };
  }

  /** Why the connection closed before the world formed. */
  private startFailure(): Error {
    if (this.gaveUp !== undefined) {
      const message = `${this.who}: the coordinator at ${this.where} gave up: ${this.gaveUp.message}`;
      return this.gaveUp.timeout ? new TimeoutError(message) : new TransportError(message);
    }
    if (this.badMessage !== undefined) return new TransportError(`${this.who}: the coordinator at ${this.where} sent a bad message: ${this.badMessage.message}`, { cause: this.badMessage });
    return new PeerLostError(`${this.who}: the coordinator at ${this.where} closed the connection while the job was starting`, 0);
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

  /** Tells the job that endpoint `endpointRank` sent this one a frame that cannot be right (`message`): the job counts it lost. */
  faulty(endpointRank: number, message: string): void {
    this.channel?.send({ type: 'faulty', endpointRank, message });
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

  private handle(message: FromCoordinator): void {
    switch (message.type) {
      case 'world':
        this.world?.resolve({ jobId: message.jobId, processCount: message.processCount, threadCount: message.threadCount, endpoints: message.endpoints });
        return;
      case 'refused':
        this.world?.reject(new ConfigError(`the coordinator refused this process: ${message.message}`));
        return;
      case 'missing':
        this.missingAnswer?.(message.message);
        return;
      case 'gaveUp':
        this.gaveUp = message;
        return;
      case 'group':
        this.activeGroups.add(message.group);
        this.events.formed(message.context);
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
        this.events.formed(message.context);
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
    }
  }

  private settle(group: string): PendingGet | undefined {
    const pending = this.pendingGets.get(group);
    this.pendingGets.delete(group);
    return pending;
  }

  private closed(): void {
    if (this.saidBye) return;
    const message = this.gaveUp === undefined ? 'the coordinator (process 0) was lost' : `the coordinator at ${this.where} gave up: ${this.gaveUp.message}`;
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
