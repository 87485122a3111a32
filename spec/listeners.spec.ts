/**
 * What a job listens on (issue 30, item 5), read from the kernel: the listening TCP sockets of
 * each process of a real ccjrun job (/proc/PID/net/tcp and tcp6, matched with the sockets among
 * /proc/PID/fd), while the job holds still (fixture listeners.ts). A job on loopback listens on
 * loopback only, with exactly the sockets docs/API.md's Listening paragraph names, and loads no
 * UCX where no pair uses it; a job that uses UCX has UCX listen on the job's interface only, and
 * strangers that connect to every socket it listens on and send junk change nothing in it.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ccjrun, environmentWithoutLaunchers, fixture } from './harness.js';
import { ConfigError } from '../src/base/errors.js';
import { ucxMissing } from '../transport/ucx/native.js';
import { netDevicesFor } from '../transport/ucx/net-devices.js';

interface Listener {
  readonly address: string;
  readonly port: number;
}

/** An IPv4 address as /proc/net/tcp writes it: the 4 bytes of a little-endian word in hex. */
function ipv4Of(hex: string): string {
  return [6, 4, 2, 0].map((at) => parseInt(hex.slice(at, at + 2), 16)).join('.');
}

/** An IPv6 address as /proc/net/tcp6 writes it (4 words, each little-endian), in full form; a v4-mapped one as IPv4. */
function ipv6Of(hex: string): string {
  const bytes = Buffer.alloc(16);
  for (let word = 0; word < 4; word += 1) bytes.writeUInt32LE(parseInt(hex.slice(word * 8, word * 8 + 8), 16), word * 4);
  if (bytes.subarray(0, 10).every((byte) => byte === 0) && bytes.readUInt16BE(10) === 0xffff) return [...bytes.subarray(12)].join('.');
  return Array.from({ length: 8 }, (_, group) => bytes.readUInt16BE(group * 2).toString(16)).join(':');
}

function isLoopbackAddress(address: string): boolean {
  return address.startsWith('127.') || address === '0:0:0:0:0:0:0:1';
}

/** The TCP sockets process `pid` listens on. */
function listenersOf(pid: number): Listener[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket) inodes.add(socket[1] as string);
    } catch {
      // Closed since it was listed.
    }
  }
  const listeners: Listener[] = [];
  for (const [table, addressOf] of [['tcp', ipv4Of], ['tcp6', ipv6Of]] as const) {
    for (const line of fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [hexAddress, hexPort] = (fields[1] ?? '').split(':');
      // fields[3] is the state (0A: LISTEN), fields[9] the socket's inode.
      if (fields[3] !== '0A' || !inodes.has(fields[9] ?? '') || hexAddress === undefined || hexPort === undefined) continue;
      listeners.push({ address: addressOf(hexAddress), port: parseInt(hexPort, 16) });
    }
  }
  return listeners;
}

/** Whether UCX's library is loaded into process `pid`. */
function ucxLoaded(pid: number): boolean {
  return /\/libucp\.so/.test(fs.readFileSync(`/proc/${pid}/maps`, 'utf8'));
}

interface Held {
  /** The job's process ids, by process rank. */
  readonly pids: number[];
  /** Lets the job go on; resolves with its exit code, output and each endpoint's result. */
  readonly release: () => Promise<{ code: number | null; stdout: string; stderr: string; results: unknown[] }>;
}

/** Starts fixture listeners.ts under ccjrun (processes × threads) and resolves once every endpoint is ready. */
async function holdJob(processes: number, threads: number, env: Record<string, string>): Promise<Held> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-listeners-'));
  const go = path.join(directory, 'go');
  const child = spawn(process.execPath, [ccjrun, '-n', String(processes), '--threads', String(threads), fixture('listeners'), go], {
    env: { ...environmentWithoutLaunchers(), CCJS_WATCHDOG_MS: '30000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A job that hangs is stopped (SIGTERM: ccjrun passes it on) before mocha gives up on the test.
  const stop = setTimeout(() => child.kill('SIGTERM'), 90_000);
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code))).finally(() => clearTimeout(stop));
  const endpoints = processes * threads;
  const pidsOf = () => [...stdout.matchAll(/^\[(\d+)\] READY (\d+)$/gm)].map((match) => ({ endpoint: Number(match[1]), pid: Number(match[2]) }));
  const ready = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => pidsOf().length === endpoints && resolve(true);
      child.stdout.on('data', check);
      check();
    }),
    closed.then(() => false),
  ]);
  const release = async () => {
    fs.writeFileSync(go, '');
    const code = await closed;
    fs.rmSync(directory, { recursive: true, force: true });
    const results: unknown[] = [];
    for (const match of stdout.matchAll(/^\[(\d+)\] RESULT (.*)$/gm)) results[Number(match[1])] = JSON.parse(match[2] as string);
    return { code, stdout, stderr, results };
  };
  if (!ready) {
    const { code } = await release();
    throw new Error(`the job exited with ${code} before every endpoint was ready:\n${stderr.slice(-3000)}`);
  }
  const pids: number[] = [];
  for (const { endpoint, pid } of pidsOf()) pids[Math.floor(endpoint / threads)] = pid;
  return { pids, release };
}

/** The results every endpoint of a job of `endpoints` reports once released. */
function expectedResults(endpoints: number): unknown[] {
  const sum = (endpoints * (endpoints - 1)) / 2;
  return Array.from({ length: endpoints }, (_, rank) => ({ received: `from ${(rank + endpoints - 1) % endpoints}`, sum }));
}

/** Releases a held job and checks that it finished well. */
async function finishes(held: Held, endpoints: number): Promise<void> {
  const { code, stderr, results } = await held.release();
  expect(code, stderr.slice(-3000)).to.equal(0);
  expect(results).to.deep.equal(expectedResults(endpoints));
}

/**
 * What docs/API.md's Listening paragraph says a job without UCX listens on: each endpoint's TCP
 * device, and in process 0 the coordinator and the heartbeat server.
 */
function ccjsListeners(processRank: number, threads: number): number {
  return threads + (processRank === 0 ? 2 : 0);
}

/** The first external IPv4 address of this host, if it has one. */
function externalAddress(): string | undefined {
  for (const entries of Object.values(os.networkInterfaces())) {
    const external = entries?.find((entry) => entry.family === 'IPv4' && !entry.internal);
    if (external) return external.address;
  }
  return undefined;
}

/** Connects to `listener`, sends junk and closes; returns a second connection, left open and silent. */
async function stranger(listener: Listener): Promise<net.Socket> {
  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: listener.address, port: listener.port }, () => resolve(socket));
      socket.on('error', reject);
    });
  const noisy = await connect();
  noisy.on('error', () => {});
  noisy.end(randomBytes(4096));
  const silent = await connect();
  silent.on('error', () => {});
  return silent;
}

describe('what a job listens on', function () {
  this.timeout(120_000);

  const loopbackJobs: { processes: number; threads: number; env: Record<string, string>; name: string }[] = [
    { processes: 2, threads: 1, env: {}, name: 'default transports' },
    { processes: 2, threads: 2, env: {}, name: 'default transports' },
    { processes: 3, threads: 1, env: { CCJS_TRANSPORT: 'auto' }, name: 'CCJS_TRANSPORT=auto' },
    { processes: 2, threads: 1, env: { CCJS_TRANSPORT: 'tcp' }, name: 'CCJS_TRANSPORT=tcp' },
    { processes: 2, threads: 2, env: { CCJS_TRANSPORT: 'shm' }, name: 'CCJS_TRANSPORT=shm' },
  ];
  for (const { processes, threads, env, name } of loopbackJobs) {
    it(`a job on one host (ccjrun -n ${processes} --threads ${threads}, ${name}) listens on loopback only, on the sockets the docs name, and loads no UCX`, async function () {
      const held = await holdJob(processes, threads, env);
      try {
        for (const [processRank, pid] of held.pids.entries()) {
          const listeners = listenersOf(pid);
          expect(listeners.filter((listener) => !isLoopbackAddress(listener.address)), `process ${processRank}`).to.deep.equal([]);
          expect(listeners, `process ${processRank}: ${JSON.stringify(listeners)}`).to.have.lengthOf(ccjsListeners(processRank, threads));
          expect(ucxLoaded(pid), `UCX loaded into process ${processRank}`).to.equal(false);
        }
      } finally {
        await finishes(held, processes * threads);
      }
    });
  }

  it('a job on one host that asks for UCX between hosts only (CCJS_DEVICES=network=ucx) has no UCX listening once it knows no pair uses it', async function () {
    if (ucxMissing() !== undefined) this.skip();
    const held = await holdJob(2, 1, { CCJS_DEVICES: 'network=ucx' });
    try {
      for (const [processRank, pid] of held.pids.entries()) {
        const listeners = listenersOf(pid);
        expect(listeners.filter((listener) => !isLoopbackAddress(listener.address)), `process ${processRank}`).to.deep.equal([]);
        expect(listeners, `process ${processRank}: ${JSON.stringify(listeners)}`).to.have.lengthOf(ccjsListeners(processRank, 1));
      }
    } finally {
      await finishes(held, 2);
    }
  });

  for (const threads of [1, 2]) {
    it(`a job on one host over UCX (CCJS_TRANSPORT=ucx, UCX_TLS=tcp, ${threads} thread(s)) has UCX listen on loopback only, and strangers sending junk to every socket change nothing`, async function () {
      if (ucxMissing() !== undefined) this.skip();
      const held = await holdJob(2, threads, { CCJS_TRANSPORT: 'ucx', UCX_TLS: 'tcp' });
      const silent: net.Socket[] = [];
      try {
        for (const [processRank, pid] of held.pids.entries()) {
          const listeners = listenersOf(pid);
          expect(ucxLoaded(pid), `UCX loaded into process ${processRank}`).to.equal(true);
          // UCX's own listeners come on top of ccjs's: the strangers below reach them too.
          expect(listeners.length, `process ${processRank}: ${JSON.stringify(listeners)}`).to.be.greaterThan(ccjsListeners(processRank, threads));
          expect(listeners.filter((listener) => listener.address !== '127.0.0.1'), `process ${processRank}`).to.deep.equal([]);
          for (const listener of listeners) silent.push(await stranger(listener));
        }
      } finally {
        try {
          await finishes(held, 2 * threads);
        } finally {
          for (const socket of silent) socket.destroy();
        }
      }
    });
  }

  it("a job over UCX on the host's external interface (CCJS_INTERFACE) listens on that address only, UCX included", async function () {
    const address = externalAddress();
    if (ucxMissing() !== undefined || address === undefined) this.skip();
    const held = await holdJob(2, 1, { CCJS_TRANSPORT: 'ucx', UCX_TLS: 'tcp', CCJS_INTERFACE: address as string });
    try {
      for (const [processRank, pid] of held.pids.entries()) {
        const listeners = listenersOf(pid);
        expect(listeners.length, `process ${processRank}: ${JSON.stringify(listeners)}`).to.be.greaterThan(ccjsListeners(processRank, 1));
        expect(listeners.filter((listener) => listener.address !== address), `process ${processRank}`).to.deep.equal([]);
      }
    } finally {
      await finishes(held, 2);
    }
  });

  it("gives UCX the job's interface by name (with any RDMA ports), every interface for a wildcard address, and a ConfigError for an address of no interface here", function () {
    const loopback = Object.entries(os.networkInterfaces()).find(([, entries]) => entries?.some((entry) => entry.address === '127.0.0.1'))?.[0];
    expect(netDevicesFor('127.0.0.1')?.split(',')[0]).to.equal(loopback);
    expect(netDevicesFor('0.0.0.0')).to.equal(undefined);
    expect(() => netDevicesFor('203.0.113.77')).to.throw(ConfigError, /cannot listen on 203\.0\.113\.77: no network interface of this host has that address/);
  });
});
