/**
 * The progress engine and the counters of the hot path: a waiting call spins on polling devices
 * for a bounded, adaptive budget, a merely posted receive only once it is awaited; counters wrap
 * instead of overflowing.
 */
import { expect } from 'chai';
import type { ColGroup, ColMember } from '../src/index.js';
import { closeAll, createMasters, runGroup } from './harness.js';
import { progressEngine } from '../src/engine/progress.js';
import type { PollingDevice } from '../src/engine/progress.js';
import { CollectiveContext } from '../src/collectives/context.js';
import { memberCore, nextOperationCounter } from '../groups/col-member.js';
import { nextSendId } from '../src/engine/engine.js';
import { NO_REDUCTION, NO_ROOT, operationCode } from '../src/engine/signature.js';

/** Counts the polls of the thread's progress engine (no messages of its own: it only observes). */
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

/**
 * Runs `body` for both members of a 2-member group in this process, each with a barrier's
 * context, while `counter` observes this thread's progress engine (spin budget 200 µs).
 */
async function withPollCounter(name: string, body: (counter: PollCounter, member: ColMember, group: ColGroup, rank: number, context: CollectiveContext) => Promise<void>): Promise<void> {
  const masters = await createMasters(1);
  const counter = new PollCounter();
  progressEngine.register(counter);
  progressEngine.setBudget(200);
  try {
    const signature = { operation: operationCode('barrier', 'hypercube'), root: NO_ROOT, reduction: NO_REDUCTION };
    await runGroup(masters, [2], name, async (member, group, rank) => {
      const context = new CollectiveContext(memberCore(member), group, rank, 'barrier', 1, signature, { bytes: 0, commutative: true, layout: { hosts: 1, perHost: 2 } });
      await body(counter, member, group, rank, context);
    });
  } finally {
    progressEngine.unregister(counter);
    progressEngine.setBudget(50);
    await closeAll(masters);
  }
}

describe('progress engine', function () {
  it('spins for a waiting receive, within its budget, but never for a merely posted one', async function () {
    await withPollCounter('spinning', async (counter, member, group, rank, context) => {
      if (rank === 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await member.sendAsync(group, 'first', 0);
        await member.sendAsync(group, 'second', 0);
        await context.send(0, 'collective');
        return;
      }
      const before = counter.polls;
      const posted = context.postReceive(1);
      expect(counter.polls, 'polls for a posted receive').to.equal(before);
      const started = process.hrtime.bigint();
      const waiting = member.receive(group, 1);
      const spunFor = Number(process.hrtime.bigint() - started) / 1000;
      expect(counter.polls, 'polls for a waiting receive').to.be.above(before);
      expect(spunFor, 'µs spent spinning').to.be.below(200 * 20);
      expect(counter.sleeps, 'devices told to sleep after a spin that found nothing').to.equal(1);
      expect(progressEngine.stats.misses).to.be.at.least(1);
      expect(await waiting).to.equal('first');
      expect(await member.receive(group, 1)).to.equal('second');
      expect(await posted).to.equal('collective');
    });
  });

  it('a receive posted now and awaited later spins when awaited, not when posted, and is counted', async function () {
    await withPollCounter('awaited', async (counter, _member, _group, rank, context) => {
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
  });

  it('does not spin when the host runs more spinning endpoints than it has cores', function () {
    const counter = new PollCounter();
    progressEngine.register(counter);
    const lift = progressEngine.forbidSpinning();
    try {
      expect(progressEngine.spinning).to.equal(false);
      lift();
      expect(progressEngine.spinning).to.equal(true);
    } finally {
      progressEngine.unregister(counter);
    }
  });
});

describe('counters of the hot path', function () {
  it('wrap instead of overflowing: operation counters below 2^31, send ids below 2^32, never 0', function () {
    expect(nextOperationCounter(0)).to.equal(1);
    expect(nextOperationCounter(0x7fff_fffe)).to.equal(0x7fff_ffff);
    expect(nextOperationCounter(0x7fff_ffff)).to.equal(1);
    expect(nextSendId(0xffff_fffe)).to.equal(0xffff_ffff);
    expect(nextSendId(0xffff_ffff)).to.equal(1);
  });
});
