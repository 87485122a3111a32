/**
 * What the security and fuzz specs use to play a stranger (or a member gone wrong) against a
 * running job's ports: raw connections that record what they receive, the real handshake, and
 * the ports a process listens on (read from /proc, Linux).
 */
import fs from 'node:fs';
import net from 'node:net';
import { encode } from '@msgpack/msgpack';
import { authenticate } from '../src/security/handshake.js';
import os from 'node:os';
import path from 'node:path';
import { fixture, freePort, spawnJob } from './harness.js';
import type { SpawnedProcess } from './harness.js';

/** A raw connection and everything it received until it closed. */
export interface Probe {
  readonly socket: net.Socket;
  /** Bytes received so far. */
  received(): Buffer;
  /** Resolves when the connection is closed (by either side). */
  readonly closed: Promise<void>;
}

export function probe(port: number): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      resolve({ socket, received: () => Buffer.concat(chunks), closed });
    });
  });
}

/** A connection that passed the handshake with `secret`; its 'data' listener is the caller's. */
export function authenticated(port: number, secret: Buffer): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('connect', () => authenticate(socket, secret, 'client', 5000).then(() => resolve(socket), reject));
  });
}

/** A length-prefixed control frame holding `value` as msgpack. */
export function controlFrame(value: unknown): Buffer {
  const body = encode(value, { useBigInt64: true });
  const frame = Buffer.alloc(4 + body.byteLength);
  frame.writeUInt32LE(body.byteLength, 0);
  frame.set(body, 4);
  return frame;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves `true` once `closed` resolves, `false` after `ms`. */
export function closesWithin(closed: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() => clearTimeout(timer));
}

/** TCP ports process `pid` listens on (its socket inodes matched against /proc/net/tcp). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1] !== undefined) inodes.add(match[1]);
    } catch {
      // The descriptor closed while we looked.
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (state === '0A' && inode !== undefined && inodes.has(inode) && local !== undefined) ports.push(parseInt(local.split(':')[1] ?? '0', 16));
    }
  }
  return ports;
}

/** Runs `task` for every item, at most `width` at once. */
export async function inParallel<T>(items: readonly T[], width: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await task(items[index] as T, index);
      }
    }),
  );
}

/** A running 4-process job of spec/fixtures/guarded.ts over tcp: its processes, the coordinator's port and process 1's tcp device port. */
export interface GuardedJob {
  readonly processes: SpawnedProcess[];
  readonly coordinatorPort: number;
  readonly dataPort: number;
  /** Lets the job finish its work and exit. */
  finish(): void;
  /** Kills what is left and removes the stop file. */
  kill(): void;
}

/** A guarded job started with `env` before the suite's tests and killed after them (as mastersForSuite does with masters). */
export function guardedJobForSuite(env: NodeJS.ProcessEnv): () => GuardedJob {
  let guarded: GuardedJob | undefined;
  before(async () => {
    guarded = await startGuardedJob(env);
  });
  after(() => guarded?.kill());
  return () => guarded as GuardedJob;
}

/** Starts a guarded job with `env` (its secret, at least) and waits until every process is READY. */
async function startGuardedJob(env: NodeJS.ProcessEnv): Promise<GuardedJob> {
  const stopFile = path.join(os.tmpdir(), `ccjs-guarded-${process.pid}-${Date.now()}`);
  const coordinatorPort = await freePort();
  const processes = await spawnJob(4, fixture('guarded'), [stopFile], { CCJS_COORDINATOR: `127.0.0.1:${coordinatorPort}`, CCJS_TRANSPORT: 'tcp', ...env });
  for (let waited = 0; !processes.every((spawned) => spawned.stdout.includes('READY')); waited += 50) {
    if (waited > 30_000) throw new Error(`the job did not start: ${processes.map((spawned) => spawned.stderr).join('\n')}`);
    await sleep(50);
  }
  // Process 1 accepts tcp connections from processes 2 and 3; its only listening port is that device's.
  const [dataPort] = listeningPorts((processes[1] as SpawnedProcess).child.pid as number);
  return {
    processes,
    coordinatorPort,
    dataPort: dataPort as number,
    finish: () => fs.writeFileSync(stopFile, ''),
    kill: () => {
      for (const spawned of processes) spawned.child.kill('SIGKILL');
      fs.rmSync(stopFile, { force: true });
    },
  };
}

/** A proxy that records what a client sends through it to `port`. */
export async function recordingProxy(port: number): Promise<{ port: number; sent: Buffer[]; close: () => void }> {
  const sent: Buffer[] = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port });
    sockets.push(client, upstream);
    client.on('data', (chunk: Buffer) => {
      sent.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      from.on('error', () => {});
      from.on('close', () => to.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as net.AddressInfo).port, sent, close: () => (sockets.forEach((socket) => socket.destroy()), server.close()) };
}
