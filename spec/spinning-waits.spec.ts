/**
 * Every wait spins before it sleeps (issue 31, item 2): a blocking call's, and a call posted now
 * and awaited later (a non-blocking algorithm's receives and sends, a rooted call's root check),
 * the moment it is awaited. Counted with ColGroupMaster.waitCounts() (sleeps and wake-ups per call)
 * between two processes over shared memory, and with spinning off, where every wait sleeps.
 */
import os from 'node:os';
import { expect } from 'chai';
import { ccjrun, closeAll, createMasters, fixture, run, runGroup } from './harness.js';
import { progressEngine } from '../src/engine/progress.js';
import type { PollingDevice } from '../src/engine/progress.js';
import type { WaitCounts } from '../src/index.js';
import { CollectiveContext } from '../src/collectives/context.js';
import { memberCore } from '../groups/col-member.js';
import { NO_REDUCTION, NO_ROOT, operationCode } from '../src/engine/signature.js';

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

/** Polls, and counts the doorbells armed; moves nothing. */
class PollCounter implements PollingDevice {
  polls = 0;
  sleeps = 0;
  progress(): number {
    this.polls += 1;
    return 0;
  }
  sleep(): void {
    this.sleeps += 1;
  }
}

describe('waits that spin', function () {
  it('a receive posted now and awaited later spins when awaited, not when posted, and is counted', async function () {
    const masters = await createMasters(1);
    const counter = new PollCounter();
    progressEngine.register(counter);
    progressEngine.setBudget(200);
    try {
      const signature = { operation: operationCode('barrier', 'hypercube'), root: NO_ROOT, reduction: NO_REDUCTION };
      await runGroup(masters, [2], 'awaited', async (member, group, rank) => {
        const context = new CollectiveContext(memberCore(member), group, rank, 'barrier', 1, signature, { bytes: 0, commutative: true, layout: { hosts: 1, perHost: 2 } });
        if (rank === 1) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          await context.send(0, 'late');
          return;
        }
        const before = { ...progressEngine.stats };
        const posted = context.postReceive<string>(1);
        const polls = counter.polls;
        expect(counter.polls, 'polls for a posted receive').to.equal(polls);
        const awaited = posted.then((value) => value);
        expect(counter.polls, 'polls once awaited').to.be.above(polls);
        expect(counter.sleeps, 'doorbells armed after the spin ran out').to.equal(1);
        expect(await awaited).to.equal('late');
        expect(progressEngine.stats.waits - before.waits).to.equal(1);
        expect(progressEngine.stats.spins - before.spins).to.equal(1);
        expect(progressEngine.stats.sleeps - before.sleeps).to.equal(1);
        // Awaited again, it does not spin again.
        const again = counter.polls;
        expect(await posted).to.equal('late');
        expect(counter.polls).to.equal(again);
      });
    } finally {
      progressEngine.unregister(counter);
      progressEngine.setBudget(50);
      await closeAll(masters);
    }
  });

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
