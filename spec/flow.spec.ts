/**
 * Flow control: a member that floods another that does not receive is held at the sender; the
 * receiver's memory for unmatched messages stays under its window per sender (the engine's own
 * counter), and nothing is lost or reordered once it receives.
 */
import { expect } from 'chai';
import { closeAll, createMasters, runGroup } from './harness.js';
import { FRAME_CHARGE } from '../src/engine/engine.js';

const WINDOW = 1024 * 1024;

for (const placement of [
  { name: 'between two endpoints over tcp', transport: 'tcp', processes: 2, perProcess: [1, 1], wait: 5000 },
  { name: 'between two endpoints over shm', transport: 'shm', processes: 2, perProcess: [1, 1], wait: 5000 },
  { name: 'within one endpoint', transport: 'auto', processes: 1, perProcess: [2], wait: 1000 },
] as const) {
  describe(`flow control ${placement.name}`, function () {
    it(`holds a flood of 100,000 eager sendAsync to a member that waits ${placement.wait / 1000} s, within the receiver's window`, async function () {
      const masters = await createMasters(placement.processes, { receiveWindow: WINDOW, transport: placement.transport });
      try {
        const count = 100_000;
        const receiver = masters[placement.processes - 1] as (typeof masters)[number];
        const sender = masters[0] as (typeof masters)[number];
        let sentWhileWaiting = 0;
        const [sent, received] = await runGroup(masters, placement.perProcess, 'flood', async (member, group, rank) => {
          if (rank === 0) {
            for (let i = 0; i < count; i += 1) await member.sendAsync(group, { i, pad: 'x'.repeat(40) }, 1);
            return count;
          }
          await new Promise((resolve) => setTimeout(resolve, placement.wait));
          sentWhileWaiting = receiver.engine.stats.unexpectedHighWater;
          let next = 0;
          for (let i = 0; i < count; i += 1) {
            const message = await member.receive<{ i: number }>(group, 0);
            if (message.i !== next) throw new Error(`message ${message.i} arrived where ${next} was due`);
            next += 1;
          }
          return next;
        });
        expect(sent).to.equal(count);
        expect(received).to.equal(count);
        // The bound holds over the whole run, and the sender was held while the receiver slept.
        expect(receiver.engine.stats.unexpectedHighWater).to.be.at.most(WINDOW);
        expect(sentWhileWaiting).to.be.above(WINDOW / 2);
        expect(sender.engine.stats.blockedSends).to.be.above(0);
        expect(receiver.engine.stats.unexpectedBytes).to.equal(0);
      } finally {
        await closeAll(masters);
      }
    });
  });
}

describe('flow control of large sendAsync messages', function () {
  it('copies them at the sender up to sendBuffer bytes, then holds the caller until earlier ones are received', async function () {
    const sendBuffer = 16 * 1024 * 1024;
    const masters = await createMasters(2, { sendBuffer, eagerLimit: 64 * 1024 });
    try {
      const size = 4 * 1024 * 1024;
      const count = 12;
      let resolvedBeforeReceiving = 0;
      let receiving = false;
      let peakCopied = 0;
      await runGroup(masters, [1, 1], 'large-flood', async (member, group, rank) => {
        if (rank === 0) {
          for (let i = 0; i < count; i += 1) {
            await member.sendAsync(group, new Uint8Array(size).fill(i), 1);
            peakCopied = Math.max(peakCopied, (masters[0] as (typeof masters)[number]).engine.stats.detachedBytes);
            if (!receiving) resolvedBeforeReceiving += 1;
          }
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
        receiving = true;
        for (let i = 0; i < count; i += 1) {
          const received = await member.receive<Uint8Array>(group, 0);
          expect([received.length, received[0], received[size - 1]]).to.deep.equal([size, i, i]);
        }
      });
      expect(resolvedBeforeReceiving).to.equal(sendBuffer / size);
      expect(peakCopied).to.be.at.most(sendBuffer);
      expect((masters[1] as (typeof masters)[number]).engine.stats.unexpectedHighWater).to.be.at.most(count * FRAME_CHARGE);
    } finally {
      await closeAll(masters);
    }
  });
});
