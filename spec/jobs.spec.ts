import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { ccjrun, distRoot, fixture, freePort, run } from './harness.js';
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
    expect(result.stdout).to.contain('[0] ring ok: 3 processes, 12 hops');
  });

  it("runs the same ring under Open MPI's mpirun and exits 0", async function () {
    if (!hasMpirun()) this.skip();
    const result = await run('mpirun', ['--allow-run-as-root', '--oversubscribe', '-np', '3', process.execPath, ring, '4']);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('ring ok: 3 processes, 12 hops');
  });

  it('aborts the job, naming the member, when run() throws', async function () {
    const result = await run(process.execPath, [ccjrun, '-n', '3', fixture('abort')], {}, 30_000);
    expect(result.code).to.not.equal(0);
    expect(result.stderr).to.match(/member Thrower #0 of process 1 \(groups: abort\) failed: Error: boom in rank 1/);
  });

  it('rejects pending calls with PeerLostError when a process is killed', async function () {
    const timeoutMs = 5000;
    const port = await freePort();
    const size = 3;
    const outputs: string[] = Array(size).fill('');
    const children: ChildProcess[] = [];
    const exited: Promise<number | null>[] = [];
    let killedAt = 0;
    const ready = new Promise<void>((resolve) => {
      let announcements = 0;
      for (let rank = 0; rank < size; rank += 1) {
        const child = spawn(process.execPath, [fixture('peer-loss')], {
          env: { ...process.env, CCJS_RANK: String(rank), CCJS_SIZE: String(size), CCJS_COORDINATOR: `127.0.0.1:${port}`, CCJS_TIMEOUT_MS: String(timeoutMs) },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        child.stdout?.on('data', (chunk: Buffer) => {
          outputs[rank] += chunk.toString();
          const text = chunk.toString();
          announcements += (text.match(/^(ready|waiting)$/gm) ?? []).length;
          if (announcements === size) resolve();
        });
        children.push(child);
        exited.push(new Promise((done) => child.on('exit', (code) => done(code))));
      }
    });
    await ready;
    // Let the receives and the sendSync reach the device before the peer dies.
    await new Promise((resolve) => setTimeout(resolve, 200));
    killedAt = Date.now();
    children[1].kill('SIGKILL');
    const codes = await Promise.all([exited[0], exited[2]]);
    expect(codes).to.deep.equal([0, 0]);
    for (const rank of [0, 2]) {
      const report = JSON.parse(outputs[rank].split('\n').find((line) => line.startsWith('{')) as string) as {
        rank: number;
        results: { call: string; error: string; message: string; at: number }[];
      };
      expect(report.rank).to.equal(rank);
      for (const result of report.results) {
        expect(result.error, result.call).to.equal('PeerLostError');
        expect(result.message).to.match(new RegExp(`${result.call} (to|from) rank 1 of group 'loss' failed: process 1 was lost`));
        expect(result.at - killedAt).to.be.below(timeoutMs);
      }
    }
  });

  it("refuses a process of another job that reaches the coordinator's port", async function () {
    const coordinator = `127.0.0.1:${await freePort()}`;
    const start = (rank: number, jobId: string) =>
      run(process.execPath, [ring, '1'], { CCJS_RANK: String(rank), CCJS_SIZE: '2', CCJS_COORDINATOR: coordinator, CCJS_JOB_ID: jobId, CCJS_TIMEOUT_MS: '3000' });
    const [owner, stranger] = await Promise.all([start(0, 'job-a'), new Promise((resolve) => setTimeout(resolve, 300)).then(() => start(1, 'job-b'))]);
    expect(stranger.code).to.equal(1);
    expect(stranger.stderr).to.match(/ConfigError: the coordinator refused this process: the coordinator at this address serves job 'job-a', not job 'job-b'/);
    expect(owner.code).to.equal(1);
    expect(owner.stderr).to.match(/TimeoutError: process 0: not all 2 processes reached the coordinator/);
  });
});
