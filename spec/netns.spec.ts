/**
 * Jobs across hosts, for real: the test makes three network namespaces (bench/netns.ts: one
 * kernel, three network stacks on a bridge) and removes them at the end. ccjrun --hosts starts the
 * processes through a launch agent that runs the command in the namespace named by HOST, with
 * CCJS_HOST=HOST. Skipped, saying why, where namespaces cannot be made (not root, no iproute2).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { ALGORITHMS, COLLECTIVES } from '../src/collectives/algorithms.js';
import { COLLECTIVE_CHECKS } from './collective-checks.js';
import { fixture, hostsOrSkip, packageRoot, run, runScenarioWith } from './harness.js';
import { checkTable, keysOnTopology } from '../src/collectives/selection.js';
import type { SelectionRule } from '../src/collectives/selection.js';
import { DEFAULT_TABLE } from '../src/collectives/default-table.js';
import type { TuneLog } from '../bench/ccjtune.js';
import { ucxMissing } from '../transport/ucx/native.js';
import { INTERFACE, SUBNET } from '../bench/netns.js';
import type { Hosts } from '../bench/netns.js';

describe('jobs across hosts (three network namespaces)', function () {
  let hosts: Hosts;

  before(function () {
    hosts = hostsOrSkip(this, 3);
  });

  after(() => hosts?.remove());

  const onHosts = (slots: number, threads: number) => ['--hosts', hosts.names.map((name) => `${name}:${slots}`).join(','), '--threads', String(threads), '--launch-agent', hosts.agent];
  // TCP between the hosts; UCX is tried on its own below. (With its shared-memory transports on,
  // UCX takes endpoints of two namespaces for one machine, and a collectives run stalls: issue 9.)
  const environment = { CCJS_INTERFACE: INTERFACE, CCJS_NO_UCX: '1' };
  const overUcx = { CCJS_INTERFACE: INTERFACE, CCJS_TRANSPORT: 'auto' };

  it('runs under ccjrun --hosts: 3 hosts × 2 processes × 2 threads, shared memory within a host, the network between hosts', async function () {
    const tables = (await runScenarioWith(onHosts(2, 2), 'devices', {}, environment)).results as string[];
    expect(tables).to.have.lengthOf(12);
    for (const [rank, table] of tables.entries()) {
      // Rank r is on host floor(r / 4): 3 endpoints there (shm), 8 elsewhere (the network).
      expect(table.match(/\((same process|same host)\)/g), table).to.have.lengthOf(3);
      expect(table.match(/\(other host\)/g), `endpoint ${rank}: ${table}`).to.have.lengthOf(8);
    }
  });

  it('carries every payload between every pair of endpoints across the hosts', async function () {
    const { results } = await runScenarioWith(onHosts(2, 2), 'payloads', {}, environment);
    expect(results).to.have.lengthOf(12);
  });

  it('carries every payload between every pair of endpoints across the hosts over UCX, and passes the collectives suite over UCX on TCP', async function () {
    const missing = ucxMissing();
    if (missing !== undefined) {
      console.warn(`      skipped: ${missing}`);
      this.skip();
    }
    const { results } = await runScenarioWith(onHosts(2, 2), 'payloads', {}, overUcx);
    expect(results).to.have.lengthOf(12);
    const collectives = (await runScenarioWith(onHosts(2, 2), 'collectives', {}, { ...overUcx, UCX_TLS: 'tcp' }, 110_000)).results as string[][];
    expect(collectives[0]).to.have.lengthOf(9 * COLLECTIVE_CHECKS.length);
  });

  it('passes the collectives suite on 1..9 members spread over the hosts, with the built-in selection (hierarchical where a group spans hosts)', async function () {
    const results = (await runScenarioWith(onHosts(2, 2), 'collectives', {}, environment, 110_000)).results as string[][];
    expect(results[0]).to.have.lengthOf(9 * COLLECTIVE_CHECKS.length);
  });

  it('runs every algorithm of every collective, hierarchical ones included, on 1..9 members across the hosts', async function () {
    const results = (await runScenarioWith(onHosts(1, 2), 'algorithms', { collectives: COLLECTIVES }, environment, 110_000)).results as string[][];
    expect(results[0]).to.deep.equal(COLLECTIVES.flatMap((collective) => Object.keys(ALGORITHMS[collective]).map((algorithm) => `${collective} ${algorithm}`)));
  });

  it('ccjtune --hosts measures the hierarchical variants over the hosts and tunes only the rules for groups over several hosts', async function () {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-tune-hosts-'));
    try {
      const file = path.join(directory, 'ccjs.config.json');
      const log = path.join(directory, 'ccjtune.json');
      const oneHost = [{ maxBytes: 4096, algorithm: 'binomial' }, { algorithm: 'mst' }];
      fs.writeFileSync(file, JSON.stringify({ collectives: { broadcast: oneHost } }));
      const hostList = hosts.names.slice(0, 2).map((name) => `${name}:2`).join(',');
      const args = [path.join(packageRoot, 'bin', 'ccjtune.js'), '--hosts', hostList, '--launch-agent', hosts.agent, '--collectives', 'broadcast', '--sizes', '8,65536', '--repetitions', '2', '--out', file, '--log', log];
      const result = await run(process.execPath, args, environment, 110_000);
      expect(result.code, result.stderr).to.equal(0);
      const { measurements, tuned, builtIn } = JSON.parse(fs.readFileSync(log, 'utf8')) as TuneLog;
      expect(new Set(measurements.map((m) => m.algorithm))).to.include('hierarchical');
      for (const m of measurements) expect(m.layout).to.deep.equal({ hosts: 2, perHost: 2 });
      const written = checkTable((JSON.parse(fs.readFileSync(file, 'utf8')) as { collectives?: unknown }).collectives ?? {}, 'the tuned table');
      if (tuned.broadcast === undefined) {
        // The built-in rules over hosts held: the file keeps its rules for one host as they were.
        expect(builtIn).to.deep.equal(['broadcast']);
        expect(written.broadcast).to.deep.equal(oneHost);
      } else {
        // Rules over hosts first, each for groups over two hosts or more; then the collective segment's rule (never tuned); then the file's rules for one host, kept.
        const throughSegment = (rule: SelectionRule) => rule.algorithm === 'shared-memory';
        const overHosts = tuned.broadcast.filter((rule) => keysOnTopology(rule) && !throughSegment(rule));
        expect(overHosts).to.not.be.empty;
        for (const rule of overHosts) expect(rule.minHosts).to.equal(2);
        expect(tuned.broadcast).to.deep.equal([...overHosts, ...(DEFAULT_TABLE.broadcast ?? []).filter(throughSegment), ...oneHost]);
        expect(written.broadcast).to.deep.equal(tuned.broadcast);
      }
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it("rejects the other hosts' pending calls with PeerLostError within the timeout when one host's processes are killed", async function () {
    const timeoutMs = 5000;
    const threads = 2;
    // One process per host, started through the agent as ccjrun would, but each on its own, so that
    // killing one host's processes leaves the others running.
    const coordinator = `${SUBNET}.1:${20_000 + (process.pid % 20_000)}`;
    // Not on loopback, so the job needs a secret (ccjrun would make one).
    const secret = randomBytes(32).toString('hex');
    const outputs = ['', '', ''];
    const children: ChildProcess[] = [];
    const ready = new Promise<void>((resolve) => {
      let announcements = 0;
      hosts.names.forEach((name, rank) => {
        const child = spawn(hosts.agent, [name, process.execPath, fixture('peer-loss')], {
          env: { ...process.env, ...environment, CCJS_SECRET: secret, CCJS_RANK: String(rank), CCJS_SIZE: '3', CCJS_THREADS: String(threads), CCJS_COORDINATOR: coordinator, CCJS_TIMEOUT_MS: String(timeoutMs) },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        child.stdout?.on('data', (chunk: Buffer) => {
          outputs[rank] += chunk.toString();
          announcements += (chunk.toString().match(/^(\[\d+\] )?(ready|waiting)$/gm) ?? []).length;
          if (announcements === 3 * threads) resolve();
        });
        children.push(child);
      });
    });
    const exited = children.map((child) => new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))));
    await ready;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const killedAt = Date.now();
    for (const pid of hosts.pids(hosts.names[1] as string)) process.kill(pid, 'SIGKILL');
    expect(await Promise.all([exited[0], exited[2]])).to.deep.equal([0, 0]);
    const reports = [0, 2].flatMap((rank) =>
      (outputs[rank] as string)
        .split('\n')
        .map((line) => line.replace(/^\[\d+\] /, ''))
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { target: number; results: { call: string; error: string; message: string; at: number }[] }),
    );
    expect(reports).to.have.lengthOf(2 * threads);
    for (const report of reports) {
      for (const result of report.results) {
        expect(result.error, result.call).to.equal('PeerLostError');
        expect(result.message).to.match(new RegExp(`endpoint ${report.target} \\(process 1, thread ${report.target % threads}\\) was lost`));
        expect(result.at - killedAt).to.be.below(timeoutMs);
      }
    }
  });
});
