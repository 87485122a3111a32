/**
 * Authentication (issue 11): strangers without the secret, with a wrong one, and replaying a
 * recorded handshake, against a running job's coordinator port and a tcp device port; where the
 * secret comes from (CCJS_SECRET_FILE, refused when others may read it; none on a non-loopback
 * interface is refused); world formation that times out names the missing process.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { distRoot, freePort, run, spawnJob } from './harness.js';
import type { SpawnedProcess } from './harness.js';
import { authenticated, closesWithin, controlFrame, guardedJobForSuite, probe, recordingProxy, sleep } from './strangers.js';

const ring = path.join(distRoot, 'examples', 'ring.js');
const JOB_KEY = 'guarded-job-key-7f3a';
const REFUSAL = /ccjs: .* refused a connection from 127\.0\.0\.1:\d+: authentication failed/g;

function refusals(spawned: SpawnedProcess): number {
  return spawned.stderr.match(REFUSAL)?.length ?? 0;
}

/** Waits until `spawned` logged `count` refusals, then a little longer to see no more come. */
async function expectRefusals(spawned: SpawnedProcess, count: number): Promise<void> {
  for (let waited = 0; waited < 5000 && refusals(spawned) < count; waited += 50) await sleep(50);
  await sleep(300);
  expect(refusals(spawned), spawned.stderr).to.equal(count);
}

describe('authentication', function () {
  this.timeout(120_000);

  describe('strangers against a running job', () => {
    const secret = randomBytes(32);
    const guarded = guardedJobForSuite({ CCJS_SECRET: secret.toString('hex'), CCJS_JOB_ID: JOB_KEY });

    for (const target of ['coordinator', 'tcp device'] as const) {
      it(`refuses, on the ${target} port, a peer without the secret, one with a wrong secret and a replayed handshake, revealing nothing`, async () => {
        const { processes: job, coordinatorPort, dataPort } = guarded();
        const port = target === 'coordinator' ? coordinatorPort : dataPort;
        const owner = job[target === 'coordinator' ? 0 : 1] as SpawnedProcess;
        expect(port).to.be.above(0);
        const before = refusals(owner);

        // No secret: the attack, a hello claiming process 2, sent as the first bytes.
        const stranger = await probe(port);
        stranger.socket.write(controlFrame({ type: 'hello', processRank: 2, processCount: 4, threadRank: 0, threadCount: 1, jobKey: JOB_KEY, host: 'x', hostname: 'x', machine: 'x', pid: 1, receiveWindow: 1, addresses: {} }));
        expect(await closesWithin(stranger.closed, 2000)).to.equal(true);

        // A wrong secret fails the proof.
        let wrong: unknown;
        await authenticated(port, randomBytes(32)).catch((error: unknown) => (wrong = error));
        expect(String(wrong)).to.match(/authentication failed: the peer closed the connection during authentication/);

        // A real client's handshake, recorded through a proxy, then replayed on a new connection.
        const proxy = await recordingProxy(port);
        const recorded = await authenticated(proxy.port, secret);
        recorded.destroy();
        proxy.close();
        const replayer = await probe(port);
        replayer.socket.write(Buffer.concat(proxy.sent));
        expect(await closesWithin(replayer.closed, 2000)).to.equal(true);

        // Each stranger got the server's greeting (a version tag and a random nonce) and nothing else.
        for (const received of [stranger.received(), replayer.received()]) {
          expect(received.length).to.equal(40);
          expect(received.subarray(0, 8).toString()).to.equal('CCJSAUT1');
          for (const secretText of [secret, Buffer.from(secret.toString('hex')), Buffer.from(JOB_KEY)]) expect(received.includes(secretText)).to.equal(false);
        }
        await expectRefusals(owner, before + 3);
      });
    }

    it('finishes normally with correct results: nothing injected, nobody lost, the secret never printed', async () => {
      const { processes: job } = guarded();
      guarded().finish();
      const codes = await Promise.all(job.map((spawned) => spawned.exited));
      expect(codes, job.map((spawned) => spawned.stderr).join('\n')).to.deep.equal([0, 0, 0, 0]);
      for (const spawned of job) {
        expect(spawned.stdout).to.match(/GUARDED ok \d+/);
        expect(spawned.stderr).not.to.match(/lost|abort/i);
        expect(spawned.stdout + spawned.stderr).not.to.include(secret.toString('hex'));
        expect(spawned.stderr).not.to.include(JOB_KEY);
      }
    });
  });

  describe('the job secret', () => {
    const secret = randomBytes(32).toString('hex');
    let directory = '';
    before(() => {
      directory = fs.mkdtempSync(path.join(os.tmpdir(), 'ccjs-secret-'));
    });
    after(() => fs.rmSync(directory, { recursive: true, force: true }));

    it('comes from CCJS_SECRET_FILE when the file is private', async () => {
      const file = path.join(directory, 'private');
      fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
      const job = await spawnJob(2, ring, ['2'], { CCJS_SECRET_FILE: file, CCJS_SECRET: '', CCJS_TRANSPORT: 'tcp' });
      const codes = await Promise.all(job.map((spawned) => spawned.exited));
      expect(codes, job.map((spawned) => spawned.stderr).join('\n')).to.deep.equal([0, 0]);
      expect((job[0] as SpawnedProcess).stdout).to.include('ring ok: 2 members, 4 hops');
    });

    it('refuses a CCJS_SECRET_FILE that group or others may read, without printing the secret', async () => {
      const file = path.join(directory, 'readable');
      fs.writeFileSync(file, secret);
      fs.chmodSync(file, 0o644);
      const result = await run(process.execPath, [ring, '1'], { CCJS_RANK: '0', CCJS_SIZE: '2', CCJS_COORDINATOR: `127.0.0.1:${await freePort()}`, CCJS_SECRET_FILE: file, CCJS_SECRET: '' });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(new RegExp(`ConfigError: CCJS_SECRET_FILE=${file} may be read by group or others \\(mode 644\\); make it private with chmod 600`));
      expect(result.stderr).not.to.include(secret);
    });

    it('refuses to start a job listening beyond loopback without a secret, saying how to set one', async () => {
      const result = await run(process.execPath, [ring, '1'], { CCJS_RANK: '0', CCJS_SIZE: '2', CCJS_COORDINATOR: `127.0.0.1:${await freePort()}`, CCJS_INTERFACE: '0.0.0.0', CCJS_SECRET: '', CCJS_SECRET_FILE: '' });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(/ConfigError: this job listens on 0\.0\.0\.0, which is not loopback, but has no job secret: set CCJS_SECRET to the same 64 hex digits in every process .* or CCJS_SECRET_FILE/);
    });
  });

  describe('world formation', () => {
    it('names the missing process when 3 of 4 started, and the others say the coordinator gave up', async () => {
      const coordinator = `127.0.0.1:${await freePort()}`;
      const start = (rank: number, timeoutMs: number) => run(process.execPath, [ring, '1'], { CCJS_RANK: String(rank), CCJS_SIZE: '4', CCJS_COORDINATOR: coordinator, CCJS_TIMEOUT_MS: String(timeoutMs) });
      // Process 0 gives up first; 1 and 2 wait longer and hear why from the coordinator.
      const [first, second, third] = await Promise.all([start(0, 2000), start(1, 8000), start(2, 8000)]);
      expect(first.code).to.equal(1);
      expect(first.stderr).to.match(/TimeoutError: process 0: not all 4 processes reached the coordinator at 127\.0\.0\.1:\d+ within 2000 ms: 3 of 4 processes reached it; missing: process 3\n/);
      for (const [rank, other] of [[1, second], [2, third]] as const) {
        expect(other?.code).to.equal(1);
        expect(other?.stderr).to.match(new RegExp(`TimeoutError: process ${rank}: the coordinator at 127\\.0\\.0\\.1:\\d+ gave up: process 0: not all 4 processes .* missing: process 3`));
      }
    });
  });
});
