/**
 * The collectives through a collective segment (src/collectives/segment/, algorithm
 * 'shared-memory'): every collective on 1..16 members in one process and over processes and
 * threads of ccjrun jobs, values larger than a chunk and empty ones, members that disagree on
 * the call, a member killed while the others wait, and the messages it sends: none once the
 * group's segment is set up (the setup is one message from the host's lowest rank to each other
 * member, on the group's first call).
 */
import { expect } from 'chai';
import { CollectiveMismatchError, PeerLostError } from '../src/index.js';
import { COLLECTIVES } from '../src/collectives/algorithms.js';
import { Reductions } from '../reduction/index.js';
import { closeAll, createMasters, fixture, mastersForSuite, runGroup, runScenario, spawnJob } from './harness.js';
import type { SpawnedProcess } from './harness.js';
import { PAYLOADS, exercise, type PayloadKind } from './exercise.js';
import { largeAndEmpty } from './scenarios/collective-segment.js';
import { shmNative } from '../transport/shm/native.js';

const MEMBERS = 16;

describe('collectives through a collective segment', function () {
  before(function () {
    if (typeof shmNative() === 'string') this.skip();
  });

  describe('in one process', function () {
    const masters = mastersForSuite(1);
    let counter = 0;

    for (const collective of COLLECTIVES) {
      it(`${collective} on 1..${MEMBERS} members, typed arrays and objects, every root`, async function () {
        for (let size = 1; size <= MEMBERS; size += 1) {
          await runGroup(masters(), [size], `segment-${counter++}`, async (member, group, rank) => {
            for (const kind of Object.keys(PAYLOADS) as PayloadKind[]) await exercise(collective, 'shared-memory', member, group, rank, kind);
          });
        }
      });
    }

    it('moves values of several MiB (read straight from the writer\'s memory) and empty ones through every collective', async function () {
      for (const size of [2, 5]) await runGroup(masters(), [size], `segment-large-${counter++}`, (member, group, rank) => largeAndEmpty(member, group, rank, 3 * 131072));
    });

    it('fails every member with CollectiveMismatchError when one calls another collective, and the next call works', async function () {
      const outcomes = await runGroup(masters(), [5], `segment-mismatch-${counter++}`, async (member, group, rank) => {
        let error: unknown;
        try {
          if (rank === 3) await member.allReduce(group, rank, Reductions.SUM, { algorithm: 'shared-memory' });
          else await member.barrier(group, { algorithm: 'shared-memory' });
        } catch (caught) {
          error = caught;
        }
        const next = await member.allReduce(group, rank, Reductions.SUM, { algorithm: 'shared-memory' });
        return { error, next };
      });
      for (const { error, next } of outcomes) {
        expect(error).to.be.instanceOf(CollectiveMismatchError);
        expect(next).to.equal(10);
      }
      expect(outcomes.some(({ error }) => /barrier.*allReduce|allReduce.*barrier/.test((error as Error).message))).to.equal(true);
    });

    it('fails with CollectiveMismatchError where members pass different roots, and no member hangs', async function () {
      const errors = await runGroup(masters(), [4], `segment-roots-${counter++}`, async (member, group, rank) => {
        try {
          await member.broadcast(group, rank, rank === 2 ? 1 : 0, { algorithm: 'shared-memory' });
          return undefined;
        } catch (error) {
          return error;
        }
      });
      const failed = errors.filter((error) => error !== undefined);
      expect(failed).to.not.be.empty;
      for (const error of failed) expect(error).to.be.instanceOf(CollectiveMismatchError);
      expect(failed.some((error) => (error as Error).message.includes('every member must pass the same root'))).to.equal(true);
    });

    it('sends no message once the segment is set up, and only the setup on the first call', async function () {
      const [master] = await createMasters(1);
      try {
        const sent = () => master!.messageCounts().sameHost.messages;
        const counts = await runGroup([master!], [6], 'segment-counts', async (member, group, rank) => {
          const before = sent();
          await member.barrier(group);
          const setup = sent() - before;
          const start = sent();
          for (let round = 0; round < 5; round += 1) {
            await member.allReduce(group, new Float64Array([rank]), Reductions.SUM);
            await member.broadcast(group, rank === 1 ? 'x' : null, 1);
            await member.barrier(group);
          }
          return { setup, calls: sent() - start };
        });
        // Members run in turn on one thread: the first to count saw the whole setup (5 messages from rank 0), or none yet.
        expect(Math.max(...counts.map((count) => count.setup))).to.equal(5);
        for (const count of counts) expect(count.calls).to.equal(0);
      } finally {
        await closeAll([master!]);
      }
    });
  });

  it('is the default only where every pair shares memory: over TCP the next rule runs, and CCJS_TRACE says why', async function () {
    const lines: string[] = [];
    const masters = await createMasters(2, { trace: (line: string) => lines.push(line) });
    try {
      await runGroup(masters, [2, 1], 'segment-refused', async (member, group) => {
        await member.allReduce(group, 1, Reductions.SUM);
      });
    } finally {
      await closeAll(masters);
    }
    const calls = lines.filter((line) => line.includes('allReduce(SUM)'));
    expect(calls).to.have.length(3);
    for (const line of calls) expect(line).to.match(/allReduce\(SUM\) bde-nonblocking, .*; shared-memory refused: rank \d is reached over tcp, not shared memory$/);
  });

  for (const { processes, threads } of [
    { processes: 4, threads: 1 },
    { processes: 2, threads: 2 },
  ]) {
    describe(`in a job of ${processes} process(es) × ${threads} thread(s) over shared memory`, function () {
      const job = (args: object, env: Record<string, string> = {}) => runScenario(processes, threads, 'collectiveSegment', args, { CCJS_TRANSPORT: 'shm', ...env }, 300_000);

      it(`runs every collective on 1..${MEMBERS} members spread over the endpoints`, async function () {
        this.timeout(320_000);
        const sizes = Array.from({ length: MEMBERS }, (_, index) => index + 1);
        const { results } = await job({ sizes });
        expect(results[0]).to.deep.equal(sizes.map((size) => `every collective on ${size}`));
      });

      it('moves values of several MiB and empty ones, read straight from the writer\'s memory', async function () {
        this.timeout(200_000);
        const { results } = await job({ sizes: [], largeSizes: [processes * threads, 9], elements: 3 * 131072 });
        expect(results[0]).to.deep.equal([`large and empty on ${processes * threads}, read by address`, 'large and empty on 9, read by address']);
      });

      it('moves them through the chunks between processes where single copy is off (CCJS_SHM_SINGLE_COPY=0)', async function () {
        this.timeout(200_000);
        const { results } = await job({ sizes: [], largeSizes: [processes * threads], elements: 3 * 131072 }, { CCJS_SHM_SINGLE_COPY: '0' });
        // A writer goes by address only where every member reads its memory (here, a member of another process does not).
        expect(results[0]).to.deep.equal([`large and empty on ${processes * threads}, read through chunks`]);
      });

      it('sends no message for calls with the built-in selection, but the setup (one message to each member from the lowest rank)', async function () {
        const size = 2 * processes * threads;
        const { results } = await runScenario(processes, threads, 'defaultCounts', { size }, { CCJS_TRANSPORT: 'shm' });
        const counts = results as { setup: number; calls: number }[];
        expect(counts.reduce((total, count) => total + count.setup, 0)).to.equal(size - 1);
        for (const count of counts) expect(count.calls).to.equal(0);
      });
    });
  }

  describe('a member killed while the others wait', function () {
    const PROCESSES = 4;
    const TIMEOUT_MS = 2000;
    const BOUND_MS = TIMEOUT_MS + 1000;

    for (const [collective, victim, root] of [
      ['allReduce', 2, 0],
      ['broadcast', 0, 0],
      ['largeBroadcast', 0, 0],
      ['barrier', 3, 0],
    ] as const) {
      it(`fails every survivor's ${collective} with PeerLostError naming the victim (process ${victim}) within timeoutMs + 1 s`, async function () {
        const job = await spawnJob(PROCESSES, fixture('faults'), [collective, 'shared-memory', String(root), 'catch'], { CCJS_TIMEOUT_MS: String(TIMEOUT_MS) });
        try {
          await Promise.all(job.map((spawned) => printedLine(spawned, 'looping')));
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
          const killedAt = Date.now();
          job[victim]?.child.kill('SIGKILL');
          const survivors = job.filter((_, rank) => rank !== victim);
          await Promise.all(survivors.map((spawned) => spawned.exited));
          for (const spawned of survivors) {
            const line = spawned.stdout.split('\n').find((text) => text.startsWith('FAILED '));
            expect(line, spawned.stdout + spawned.stderr).to.not.equal(undefined);
            const failure = JSON.parse((line as string).slice('FAILED '.length)) as { name: string; processRank: number; message: string; at: number };
            expect(failure.name, failure.message).to.equal(PeerLostError.name);
            expect(failure.processRank, failure.message).to.equal(victim);
            expect(failure.at - killedAt, failure.message).to.be.at.most(BOUND_MS);
            expect(spawned.child.exitCode).to.equal(0);
          }
        } finally {
          for (const spawned of job) if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGKILL');
          await Promise.all(job.map((spawned) => spawned.exited));
        }
      });
    }
  });
});

function printedLine(spawned: SpawnedProcess, text: string): Promise<void> {
  const seen = () => spawned.stdout.split('\n').includes(text);
  return new Promise((resolve, reject) => {
    if (seen()) resolve();
    spawned.child.stdout?.on('data', () => seen() && resolve());
    void spawned.exited.then(() => (seen() ? resolve() : reject(new Error(`exited before printing '${text}': ${spawned.stderr}`))));
  });
}
