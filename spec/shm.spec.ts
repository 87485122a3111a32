/**
 * The shared-memory device's own duties, in real jobs between two threads of a process and
 * between two processes: a full ring holds its sender and loses nothing, frames of every size
 * around its boundaries arrive intact, and without the addon processes fall back to TCP while
 * threads keep their rings. (Every call and collective over shm: devices.spec.ts; a peer killed
 * on shm: jobs.spec.ts.)
 */
import os from 'node:os';
import { expect } from 'chai';
import { runScenario } from './harness.js';
import type { FloodReport, LargeReport, LentOrCopiedReport, LentReport, StoppedReport } from './scenarios/rings.js';
import { expectLentOrCopied } from './lending.js';

const RING = 64 * 1024;
const SMALL_RINGS = { CCJS_TRANSPORT: 'shm', CCJS_SHM_RING_BYTES: String(RING) };

for (const { processes, threads, between } of [
  { processes: 1, threads: 2, between: 'two threads' },
  { processes: 2, threads: 1, between: 'two processes' },
] as const) {
  describe(`shm rings between ${between}`, function () {
    it('hold a sender whose receiver is blocked, within its window, and lose nothing', async function () {
      const bytes = 16 * 1024 * 1024;
      const results = (await runScenario(processes, threads, 'blockedReceiver', { bytes, blockMs: 1000 }, SMALL_RINGS)).results as [[FloodReport], [number]];
      const report = results[0][0];
      expect(results[1][0]).to.equal(report.messages);
      // The ring filled and the rest waited at the sender, never more than the receiver's window.
      expect(report.stats.ringFull).to.be.above(0);
      expect(report.stats.queuedHighWater).to.be.above(RING);
      expect(report.stats.queuedHighWater).to.be.at.most(report.receiveWindow);
      expect(report.stats.queuedBytes).to.equal(0);
    });

    it('carry 60 messages of 256 KiB to 4 MiB intact, copied by both ends at once', async function () {
      const results = (await runScenario(processes, threads, 'largeMessages', { count: 60 }, { CCJS_TRANSPORT: 'shm' })).results as [[LargeReport], [number]];
      expect(results[1]).to.deep.equal([60]);
      expect(results[0][0].sent).to.equal(60);
      expect(results[0][0].singleCopies).to.equal(60);
      // The sender spins (and so helps) only with a core of its own; its receiver claims chunks too.
      if (os.availableParallelism() >= 2) expect(results[0][0].helpedChunks).to.be.above(0);
    });

    it('take sendSync messages larger than the eager limit eagerly, read from the sender, while the window allows, and lose nothing', async function () {
      const bytes = 512 * 1024;
      const results = (await runScenario(processes, threads, 'lentUnexpected', { count: 12, bytes, blockMs: 300 }, { CCJS_TRANSPORT: 'shm' })).results as [[LentReport], [LentReport]];
      const [[sender], [receiver]] = results;
      expect(sender.singleCopies).to.equal(12);
      // Several waited at the receiver whole (a rendezvous would have left only its announcement there), never more than its window.
      expect(receiver.unexpectedHighWater).to.be.above(2 * bytes);
      expect(receiver.unexpectedHighWater).to.be.at.most(receiver.receiveWindow);
    });

    it('read bodies that wait in the sender\'s memory straight into the buffer a receive gives', async function () {
      // sendSync lends its data from 64 KiB on; sendAsync only above the eager limit (128 KiB), below
      // which its data goes through the ring.
      for (const { bytes, read } of [
        { bytes: 128 * 1024, read: 10 },
        { bytes: 2 * 1024 * 1024, read: 20 },
      ]) {
        const results = (await runScenario(processes, threads, 'intoOneBuffer', { count: 10, bytes }, { CCJS_TRANSPORT: 'shm' })).results as [[number], [number]];
        expect(results[1][0], `bodies of ${bytes} bytes read into the buffer`).to.equal(read);
      }
    });

    it('deliver what a sender sent before it closed, and drop the credit for it that has nowhere to go', async function () {
      const results = (await runScenario(processes, threads, 'receivedAfterClose', { count: 10, bytes: 128 * 1024, sleepMs: 300 }, { CCJS_TRANSPORT: 'shm' })).results as [[number], [number]];
      expect(results).to.deep.equal([[10], [10]]);
    });

    it('lend large sendAsync data to a receiver that waits for it, and copy it for one that does not', async function () {
      const results = (await runScenario(processes, threads, 'lentOrCopied', { count: 40, bytes: 1024 * 1024 }, { CCJS_TRANSPORT: 'shm' })).results as [[LentOrCopiedReport], [number]];
      expectLentOrCopied(results);
    });

    for (const singleCopy of [true, false]) {
      it(`carry 1,000 messages of sizes around the ring, copy and eager boundaries intact, ${singleCopy ? 'large ones read from the sender\'s memory' : 'all through the ring'}`, async function () {
        const env = { ...SMALL_RINGS, CCJS_SHM_SINGLE_COPY: String(singleCopy) };
        const results = (await runScenario(processes, threads, 'boundaries', { count: 1000 }, env)).results as [[{ sent: number; singleCopies: number }], [number]];
        expect(results[1]).to.deep.equal([1000]);
        expect(results[0][0].sent).to.equal(1000);
        // About a third of the sizes are rendezvous messages (above the eager limit): those go by single copy.
        if (singleCopy) expect(results[0][0].singleCopies).to.be.above(200);
        else expect(results[0][0].singleCopies).to.equal(0);
      });
    }
  });
}

describe('shm single copy with a sender that stops', function () {
  it('copies a body whole when its sender, stopped with a chunk claimed, is late, and loses nothing', async function () {
    if (os.availableParallelism() < 2) this.skip();
    const { results } = await runScenario(2, 1, 'stoppedSender', {}, { CCJS_TRANSPORT: 'shm' });
    const [[sent], [report]] = results as [[number], [StoppedReport]];
    expect(report.messages).to.equal(sent);
    expect(report.intact).to.equal(report.messages);
    expect(report.lateSenders, 'a stop never caught the sender with a chunk claimed').to.be.above(0);
  });
});

describe('shm single copy at the end of a job', function () {
  it('completes the last large sends of members whose peers read them and close at once (4 processes, 3 jobs)', async function () {
    for (let job = 0; job < 3; job += 1) {
      const { results } = await runScenario(4, 1, 'largeUntilTheEnd', { calls: 20 }, { CCJS_TRANSPORT: 'shm' });
      expect(results).to.deep.equal([[20], [20], [20], [20]]);
    }
  });
});

describe('shm without the addon (CCJS_NO_NATIVE_SHM=1)', function () {
  it('serves processes with TCP after one warning per process, and threads still with shm', async function () {
    const env = { CCJS_NO_NATIVE_SHM: '1', CCJS_TRANSPORT: 'auto' };
    const { results: tables, stderr } = await runScenario(2, 2, 'devices', {}, env);
    for (const table of tables as string[]) {
      expect(table).to.match(/shm \(same process\)/);
      expect(table.match(/tcp \(same host\)/g), table).to.have.lengthOf(2);
      expect(table).not.to.match(/shm \(same host\)/);
    }
    expect(stderr.match(/shared-memory addon is switched off/g), stderr).to.have.lengthOf(2);
    const { results } = await runScenario(2, 2, 'payloads', {}, env);
    expect(results).to.have.lengthOf(4);
  });
});
