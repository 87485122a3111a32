/**
 * What the security and fuzz specs use to play a stranger (or a member gone wrong) against a
 * running job's ports: raw connections that record what they receive, the real handshake, and
 * the ports a process listens on (read from /proc, Linux).
 */
import fs from 'node:fs';
import net from 'node:net';
import { encode } from '@msgpack/msgpack';
import { authenticate } from '../src/security/handshake.js';

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
