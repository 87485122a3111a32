import { expect } from 'chai';
import { mastersForSuite, runGroup } from './harness.js';
import { STARVATION_BOUND_MS } from '../src/engine/progress.js';

/** Two members: both in one process (the local device), or one in each of two masters (TCP). */
const PLACEMENTS = [
  { name: 'in one process', processes: 1, perProcess: [2] },
  { name: 'across two processes', processes: 2, perProcess: [1, 1] },
] as const;

/** Enough calls for the starvation guard to look at the clock (every 64th call) and defer a call several times. */
const SENDS = 300;

/** Keeps this thread busy, without turning its event loop, a little longer than the starvation bound. */
function busyWait(): void {
  const until = performance.now() + STARVATION_BOUND_MS + 1;
  while (performance.now() < until);
}

let groupCounter = 0;

for (const placement of PLACEMENTS) {
  describe(`sendAsync settles in call order ${placement.name} (issue 30, item 6)`, function () {
    const masters = mastersForSuite(placement.processes);

    it('settles calls to one destination in call order while the event loop is starved between them', async function () {
      const [sender, receiver] = await runGroup(masters(), placement.perProcess, `settle-order-${groupCounter++}`, async (member, group, rank) => {
        if (rank === 1) {
          const received: number[] = [];
          for (let i = 0; i < SENDS; i += 1) received.push(await member.receive<number>(group, 0));
          return received;
        }
        const settled: number[] = [];
        const calls: Promise<void>[] = [];
        for (let i = 0; i < SENDS; i += 1) {
          calls.push(member.sendAsync(group, i, 1).then(() => void settled.push(i)));
          busyWait();
        }
        await Promise.all(calls);
        return settled;
      });
      const callOrder = [...Array(SENDS).keys()];
      expect(receiver, 'the order in which the messages arrived').to.deep.equal(callOrder);
      expect(sender, 'the order in which the sendAsync promises settled').to.deep.equal(callOrder);
    });
  });
}
