import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { ccjrun, distRoot, fixture, freePort, run } from './harness.js';
import { ucxMissing } from '../transport/ucx/native.js';
import fs from 'node:fs';
import path from 'node:path';

const ring = path.join(distRoot, 'examples', 'ring.js');

function hasMpirun(): boolean {
  try {
    execFileSync('mpirun', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('multi-process jobs', function () {
  it('runs a ring under ccjrun and exits 0', async function () {
    const result = await run(process.execPath, [ccjrun, '-n', '3', ring, '4']);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('[0] ring ok: 3 members, 12 hops');
  });

  it("runs the same ring under Open MPI's mpirun and exits 0", async function () {
    if (!hasMpirun()) this.skip();
    const result = await run('mpirun', ['--allow-run-as-root', '--oversubscribe', '-np', '3', process.execPath, ring, '4']);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('ring ok: 3 members, 12 hops');
  });

  it('aborts the job, naming the member, when run() throws', async function () {
    const result = await run(process.execPath, [ccjrun, '-n', '2', fixture('abort')], {}, 30_000);
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.match(/member Thrower #0 of process 1 \(groups: abort\) failed: Error: boom in rank 1/);
    // The rank where it started is named, not whichever stopped first.
    expect(result.stderr).to.contain('ccjrun: rank 1 exited with code 1; stopping the job');
    expect(result.stderr).to.not.contain('ccjrun: rank 0 exited');
  });

  it('aborts the whole job, naming the member and its thread, when run() throws in a worker thread', async function () {
    const result = await run(process.execPath, [ccjrun, '-n', '2', '--threads', '3', fixture('abort')], {}, 30_000);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/\[5\] ccjs: aborting the job: member Thrower #0 of endpoint 5 \(process 1, thread 2\) \(groups: abort\) failed: Error: boom in rank 5/);
    expect(result.stderr).to.contain('ccjrun: process 1 (endpoints 3..5) exited with code 1; stopping the job');
  });

  it('runs endpoints in worker threads under mpirun too (CCJS_THREADS)', async function () {
    if (!hasMpirun()) this.skip();
    const result = await run('mpirun', ['--allow-run-as-root', '--oversubscribe', '-x', 'CCJS_THREADS=2', '-np', '2', process.execPath, ring, '2']);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('ring ok: 4 members, 8 hops');
  });

  for (const [transport, threads, ucxTls] of [
    ['tcp', 1, undefined],
    ['tcp', 2, undefined],
    ['shm', 1, undefined],
    ['shm', 2, undefined],
    ['ucx', 1, 'tcp'],
    ['ucx', 1, 'sm'],
  ] as const) {
    it(`rejects pending calls with PeerLostError when a process${threads > 1 ? ` with ${threads} threads` : ''} is killed (${transport}${ucxTls ? `, UCX_TLS=${ucxTls}` : ''})`, async function () {
      const missing = ucxTls === undefined ? undefined : ucxMissing();
      if (missing !== undefined) {
        console.warn(`      skipped: ${missing}`);
        this.skip();
      }
      const timeoutMs = 5000;
      const port = await freePort();
      const processes = 3;
      const endpoints = processes * threads;
      const outputs: string[] = Array(processes).fill('');
      const children: ChildProcess[] = [];
      const exited: Promise<number | null>[] = [];
      const ready = new Promise<void>((resolve) => {
        let announcements = 0;
        for (let rank = 0; rank < processes; rank += 1) {
          const child = spawn(process.execPath, [fixture('peer-loss')], {
            env: { ...process.env, CCJS_RANK: String(rank), CCJS_SIZE: String(processes), CCJS_THREADS: String(threads), CCJS_COORDINATOR: `127.0.0.1:${port}`, CCJS_TIMEOUT_MS: String(timeoutMs), CCJS_TRANSPORT: transport, ...(ucxTls ? { UCX_TLS: ucxTls } : {}) },
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          child.stdout?.on('data', (chunk: Buffer) => {
            outputs[rank] += chunk.toString();
            announcements += (chunk.toString().match(/^(\[\d+\] )?(ready|waiting)$/gm) ?? []).length;
            if (announcements === endpoints) resolve();
          });
          children.push(child);
          exited.push(new Promise((done) => child.on('exit', (code) => done(code))));
        }
      });
      await ready;
      // Let the receives and the sendSync reach the engine before the peer dies.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const killedAt = Date.now();
      children[1]?.kill('SIGKILL');
      const codes = await Promise.all([exited[0], exited[2]]);
      expect(codes).to.deep.equal([0, 0]);
      const reports = [0, 2].flatMap((rank) =>
        (outputs[rank] as string)
          .split('\n')
          .map((line) => line.replace(/^\[\d+\] /, ''))
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { rank: number; target: number; results: { call: string; error: string; message: string; at: number }[] }),
      );
      expect(reports.map((report) => report.rank).sort()).to.deep.equal([0, 2].flatMap((process) => Array.from({ length: threads }, (_, thread) => process * threads + thread)));
      for (const report of reports) {
        const lost = threads === 1 ? 'process 1' : `endpoint ${report.target} \\(process 1, thread ${report.target % threads}\\)`;
        for (const result of report.results) {
          expect(result.error, result.call).to.equal('PeerLostError');
          expect(result.message).to.match(new RegExp(`${result.call} (to|from) rank ${report.target} of group 'loss' failed: ${lost} was lost`));
          expect(result.at - killedAt).to.be.below(timeoutMs);
        }
      }
      // Nothing of the job is left in /dev/shm, the killed process's segment included.
      const pids = new Set(children.map((child) => String(child.pid)));
      expect(fs.readdirSync('/dev/shm').filter((name) => pids.has(/^ccjs-(\d+)-/.exec(name)?.[1] ?? ''))).to.deep.equal([]);
    });
  }

  it("refuses a process of another job that reaches the coordinator's port", async function () {
    const coordinator = `127.0.0.1:${await freePort()}`;
    const start = (rank: number, jobId: string) =>
      run(process.execPath, [ring, '1'], { CCJS_RANK: String(rank), CCJS_SIZE: '2', CCJS_COORDINATOR: coordinator, CCJS_JOB_ID: jobId, CCJS_TIMEOUT_MS: '3000' });
    const [owner, stranger] = await Promise.all([start(0, 'job-a'), new Promise((resolve) => setTimeout(resolve, 300)).then(() => start(1, 'job-b'))]);
    // On loopback without CCJS_SECRET each job's secret derives from its key: the stranger cannot authenticate.
    expect(stranger.code).to.equal(1);
    expect(stranger.stderr).to.match(/ConfigError: process 1: the coordinator at 127\.0\.0\.1:\d+ did not accept this process \(authentication failed/);
    expect(stranger.stderr).not.to.include('job-a');
    expect(owner.code).to.equal(1);
    expect(owner.stderr).to.match(/ccjs: the coordinator refused a connection from 127\.0\.0\.1:\d+: authentication failed: the peer does not know the job secret/);
    expect(owner.stderr).to.match(/TimeoutError: process 0: not all 2 processes reached the coordinator at 127\.0\.0\.1:\d+ within 3000 ms: 1 of 2 processes reached it; missing: process 1/);
  });
});
