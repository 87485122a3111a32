/**
 * Issue 30.7: a clean run prints nothing that looks like an attack. A short job's heartbeat
 * threads used to be told to stop while still connecting, and sent their `bye` into the
 * handshake, so process 0 reported its own job's processes as refused strangers in about one run
 * in four. A stranger at the heartbeat port is still reported.
 */
import { expect } from 'chai';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ccjrun, distRoot, run } from './harness.js';
import type { SpawnedProcess } from './harness.js';
import { closesWithin, guardedJobForSuite, listeningPorts, probe, sleep } from './strangers.js';

const hello = path.join(distRoot, 'examples', 'tutorial', 'hello.js');
const RUNS = 50;

describe('clean runs (issue 30.7)', function () {
  this.timeout(600_000);

  it(`${RUNS} runs of a 4-process hello print no refused connection`, async () => {
    for (let runIndex = 0; runIndex < RUNS; runIndex += 1) {
      const result = await run(process.execPath, [ccjrun, '-n', '4', hello]);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout.match(/hello from rank/g)?.length, result.stdout).to.equal(4);
      expect(result.stderr, `run ${runIndex + 1} of ${RUNS}`).not.to.match(/refused/);
    }
  });

  describe('a stranger at the heartbeat port', () => {
    const guarded = guardedJobForSuite({ CCJS_SECRET: randomBytes(32).toString('hex'), CCJS_TIMEOUT_MS: '5000' });

    it('is reported by process 0', async () => {
      const { processes, coordinatorPort } = guarded();
      const process0 = processes[0] as SpawnedProcess;
      // Process 0 listens on the coordinator's port, its tcp device's and its heartbeat thread's:
      // the stranger tries each but the coordinator's, and the heartbeat server must name itself.
      const otherPorts = listeningPorts(process0.child.pid as number).filter((port) => port !== coordinatorPort);
      expect(otherPorts).to.have.length.above(0);
      for (const port of otherPorts) {
        const stranger = await probe(port);
        // What a heartbeat client says after its handshake, sent without one (more than a greeting's 40 bytes).
        stranger.socket.write(`hello 2\n${'beat\n'.repeat(8)}`);
        expect(await closesWithin(stranger.closed, 2000)).to.equal(true);
      }
      for (let waited = 0; waited < 5000 && !process0.stderr.includes('heartbeat server refused'); waited += 50) await sleep(50);
      expect(process0.stderr).to.match(/ccjs: the heartbeat server refused a connection from 127\.0\.0\.1:\d+: authentication failed/);
    });
  });
});
