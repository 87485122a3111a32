/**
 * Every wait spins before it sleeps (issue 31, item 2): a blocking call's, and a call posted now
 * and awaited later (a non-blocking algorithm's receives and sends, a rooted call's root check),
 * the moment it is awaited (spec/progress.spec.ts checks that in one process). Counted with ColGroupMaster.waitCounts() (sleeps and wake-ups per call)
 * between two processes over shared memory, and with spinning off, where every wait sleeps.
 */
import os from 'node:os';
import { expect } from 'chai';
import { ccjrun, fixture, run } from './harness.js';
import type { WaitCounts } from '../src/index.js';

type Counted = Pick<WaitCounts, 'waits' | 'spins' | 'sleeps' | 'wakeUps' | 'collectives'> & { calls: number };
interface Report {
  readonly endpoint: number;
  readonly spinning: boolean;
  readonly kinds: Record<string, Counted>;
}

const CALLS = 2000;
const COLLECTIVES = ['barrier', 'allReduce bde-blocking', 'allReduce bde-nonblocking', 'allReduce default', 'broadcast', 'allGather'];
const POINT_TO_POINT = ['sendReceive', 'pingPong', 'probe'];

/** Both endpoints' reports of `calls` calls of each kind (spec/fixtures/spinning-waits.ts), over shm between 2 processes. */
async function waitsOfJob(spinMicroseconds: number): Promise<Report[]> {
  const env = { CCJS_TRANSPORT: 'shm', CCJS_SPIN_US: String(spinMicroseconds) };
  const result = await run(process.execPath, [ccjrun, '-n', '2', fixture('spinning-waits'), String(CALLS), '200'], env, 100_000);
  if (result.code !== 0) throw new Error(`the job exited with ${result.code ?? result.signal}:\n${result.stderr.slice(-4000)}`);
  const reports = [...result.stdout.matchAll(/^\[\d+\] RESULT (.*)$/gm)].map((match) => JSON.parse(match[1] as string) as Report);
  expect(reports).to.have.length(2);
  return reports;
}

describe('waits that spin', function () {
  it('between two spinning processes over shm, collectives and exchanges of 8 B never sleep (at most 1 % of calls)', async function () {
    if (os.availableParallelism() < 2) this.skip();
    // A budget long enough that a peer scheduled out by other load on a small machine does not
    // end the spin: what is checked is that every wait spins, not how long a spin must be.
    for (const report of await waitsOfJob(20_000)) {
      expect(report.spinning, `endpoint ${report.endpoint} spins`).to.equal(true);
      for (const kind of [...COLLECTIVES, ...POINT_TO_POINT]) {
        const counted = report.kinds[kind] as Counted;
        const where = `${kind} at endpoint ${report.endpoint}: ${JSON.stringify(counted)}`;
        if (COLLECTIVES.includes(kind)) expect(counted.collectives, where).to.equal(CALLS);
        expect(counted.spins, where).to.equal(counted.waits);
        expect(counted.sleeps / CALLS, `sleeps per call, ${where}`).to.be.at.most(0.01);
        expect(counted.wakeUps / CALLS, `wake-ups per call, ${where}`).to.be.at.most(0.01);
      }
    }
  });

  it('with spinning off (spinMicroseconds 0), every wait sleeps and the calls complete all the same', async function () {
    for (const report of await waitsOfJob(0)) {
      expect(report.spinning).to.equal(false);
      for (const kind of [...COLLECTIVES, ...POINT_TO_POINT]) {
        const counted = report.kinds[kind] as Counted;
        const where = `${kind} at endpoint ${report.endpoint}: ${JSON.stringify(counted)}`;
        if (COLLECTIVES.includes(kind)) expect(counted.collectives, where).to.equal(CALLS);
        expect(counted.spins, where).to.equal(0);
        expect(counted.sleeps, where).to.equal(counted.waits);
        expect(counted.sleeps, where).to.be.above(0);
        expect(counted.wakeUps, where).to.be.above(0);
      }
    }
  });
});
