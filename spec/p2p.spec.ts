import { expect } from 'chai';
import { closeAll, createMasters, mastersForSuite, runGroup } from './harness.js';
import { orderedStream, payloadExchange, payloadsFor, receiveInto, taskFarm } from './scenarios/p2p.js';
import { ANY_SOURCE, ANY_TAG } from '../src/index.js';

/** Two members: both in one process, or one in each of two processes (TCP). */
const PLACEMENTS = [
  { name: 'in one process', processes: 1, perProcess: [2] },
  { name: 'across two processes', processes: 2, perProcess: [1, 1] },
] as const;

let groupCounter = 0;
const nextGroup = () => `p2p-${groupCounter++}`;

for (const serializer of ['msgpack', 'v8'] as const) {
  for (const placement of PLACEMENTS) {
    describe(`point-to-point ${placement.name} (${serializer})`, function () {
      const masters = mastersForSuite(placement.processes, { serializer });

      for (const payload of payloadsFor(serializer === 'v8')) {
        it(`sendSync/receive, sendAsync/receive, sendReceive and rendezvous carry ${payload.name}`, async function () {
          await runGroup(masters(), placement.perProcess, nextGroup(), payloadExchange([payload]));
        });
      }

      it('receives binary messages of every protocol into the receiver\'s buffers, and fails those that cannot go there', async function () {
        expect(await runGroup(masters(), placement.perProcess, nextGroup(), receiveInto())).to.deep.equal([0, 24]);
      });

      it('delivers 10,000 small messages between a pair in order', async function () {
        const count = 10_000;
        const received = await runGroup(masters(), placement.perProcess, nextGroup(), async (member, group, rank) => {
          if (rank === 0) {
            for (let i = 0; i < count; i += 1) await member.sendAsync(group, { i }, 1);
            return [];
          }
          const order: number[] = [];
          for (let i = 0; i < count; i += 1) order.push((await member.receive<{ i: number }>(group, 0)).i);
          return order;
        });
        expect(received[1]).to.deep.equal([...Array(count).keys()]);
      });

      it('keeps every large sendAsync message intact while later ones reuse the sender\'s rendezvous copies', async function () {
        // Above the eager limit sendAsync copies the data into pooled memory that later messages reuse (CopyPool):
        // a receiver that keeps earlier messages must still hold what was sent, and the caller may overwrite its array at once.
        const count = 12;
        const sizes = [200_000, 1 << 20, 300_001, 1 << 20];
        const kept = await runGroup(masters(), placement.perProcess, nextGroup(), async (member, group, rank) => {
          if (rank === 0) {
            const array = new Float64Array(1 << 17);
            for (let i = 0; i < count; i += 1) {
              const message = array.subarray(0, (sizes[i % sizes.length] as number) / 8);
              message.fill(i + 0.5);
              await member.sendAsync(group, message, 1);
              message.fill(-1);
            }
            return [];
          }
          const messages: Float64Array[] = [];
          for (let i = 0; i < count; i += 1) messages.push(await member.receive<Float64Array>(group, 0));
          return messages.map((message) => [message.length, message.every((value) => value === message[0]) ? (message[0] as number) : NaN]);
        });
        expect(kept[1]).to.deep.equal(Array.from({ length: count }, (_, i) => [Math.floor((sizes[i % sizes.length] as number) / 8), i + 0.5]));
      });

      it('never mixes the messages of two groups used by the same members', async function () {
        const [first, second] = [nextGroup(), nextGroup()];
        await runGroup(masters(), placement.perProcess, first, async (member, groupA, rank) => {
          const master = masters()[groupA.processOf(rank)];
          master.addMember(second, member);
          const groupB = await master.getGroup(second, 2);
          if (rank === 0) {
            for (let i = 0; i < 100; i += 1) {
              await member.sendAsync(groupA, `A${i}`, 1);
              await member.sendAsync(groupB, `B${i}`, groupB.getRank(member) === 0 ? 1 : 0);
            }
            return;
          }
          const fromB = [];
          for (let i = 0; i < 100; i += 1) fromB.push(await member.receive<string>(groupB, 1 - groupB.getRank(member)));
          const fromA = [];
          for (let i = 0; i < 100; i += 1) fromA.push(await member.receive<string>(groupA, 0));
          expect(fromA).to.deep.equal([...Array(100).keys()].map((i) => `A${i}`));
          expect(fromB).to.deep.equal([...Array(100).keys()].map((i) => `B${i}`));
        });
      });

      it('rejects a rank outside the group with a RangeError naming it, before sending', async function () {
        await runGroup(masters(), placement.perProcess, nextGroup(), async (member, group) => {
          await member.sendAsync(group, 1, 2).then(
            () => expect.fail('rank 2 accepted'),
            (error: unknown) => {
              expect(error).to.be.instanceOf(RangeError);
              expect((error as Error).message).to.match(/sendAsync destination 2 is not a rank of group/);
            },
          );
          await member.receive(group, -2).then(
            () => expect.fail('rank -2 accepted'),
            (error: unknown) => expect((error as Error).message).to.match(/receive source -2/),
          );
        });
      });
    });
  }
}

for (const placement of [
  { name: 'in one process', processes: 1, perProcess: [4] },
  { name: 'across three processes', processes: 3, perProcess: [1, 2, 1] },
] as const) {
  describe(`tags and wildcards ${placement.name}`, function () {
    const masters = mastersForSuite(placement.processes);

    it('keeps the order of 10,000 messages per (sender, receiver, tag), with tags and ANY_TAG interleaved', async function () {
      const counts = await runGroup(masters(), placement.perProcess, nextGroup(), orderedStream(10_000));
      expect(counts).to.deep.equal([10_000, 10_000, 10_000, 10_000]);
    });

    it('farms out tasks with ANY_SOURCE, ANY_TAG and probe', async function () {
      const [tally] = await runGroup(masters(), placement.perProcess, nextGroup(), taskFarm(200));
      expect((tally as number[]).reduce((a, b) => a + b, 0)).to.equal(200);
    });

    it('keeps messages of one sender in order whatever their tags, and wildcards never take collective traffic', async function () {
      await runGroup(masters(), placement.perProcess, nextGroup(), async (member, group, rank) => {
        if (rank === 1) {
          for (let tag = 5; tag >= 0; tag -= 1) await member.sendAsync(group, `tag ${tag}`, 0, { tag });
        }
        if (rank === 0) {
          // A collective message from rank 2 waits here too, but ANY_SOURCE/ANY_TAG must not take it.
          const barrier = member.barrier(group);
          const taken = [];
          for (let i = 0; i < 6; i += 1) taken.push(await member.receiveMessage<string>(group, ANY_SOURCE, { tag: ANY_TAG }));
          expect(taken.map((message) => [message.source, message.tag, message.value])).to.deep.equal([5, 4, 3, 2, 1, 0].map((tag) => [1, tag, `tag ${tag}`]));
          await barrier;
          return;
        }
        await member.barrier(group);
      });
    });

    it('probes without receiving, for a specific source and tag or any', async function () {
      await runGroup(masters(), placement.perProcess, nextGroup(), async (member, group, rank) => {
        if (rank === 1) {
          await member.sendAsync(group, Float64Array.of(1, 2, 3), 0, { tag: 9 });
          await member.sendAsync(group, 'second', 0, { tag: 3 });
        }
        if (rank === 0) {
          expect(await member.probe(group, 1, { tag: 3 })).to.include({ source: 1, tag: 3 });
          expect(await member.probe(group, ANY_SOURCE, { tag: ANY_TAG })).to.deep.equal({ source: 1, tag: 9, bytes: 24 });
          expect(await member.receive(group, 1, { tag: 3 })).to.equal('second');
          expect(await member.receive(group, 1, { tag: 9 })).to.deep.equal(Float64Array.of(1, 2, 3));
        }
      });
    });

    it('rejects tags outside 0..2^31−1, and wildcards where they make no sense, before sending', async function () {
      await runGroup(masters(), placement.perProcess, nextGroup(), async (member, group, rank) => {
        if (rank !== 0) return;
        for (const tag of [-2, 2 ** 31, 1.5]) {
          const error = await member.sendAsync(group, 1, 1, { tag }).then(() => undefined, (caught: unknown) => caught);
          expect(error).to.be.instanceOf(RangeError);
          expect((error as Error).message).to.contain(`tag ${tag} is not an integer in 0..2147483647`);
        }
        const wildcardSend = await member.sendAsync(group, 1, 1, { tag: ANY_TAG }).then(() => undefined, (caught: unknown) => caught);
        expect(wildcardSend).to.be.instanceOf(RangeError);
        const wildcardDestination = await member.sendSync(group, 1, ANY_SOURCE).then(() => undefined, (caught: unknown) => caught);
        expect(wildcardDestination).to.be.instanceOf(RangeError);
      });
    });
  });
}

describe('point-to-point beyond 32-bit lengths', function () {
  it('sends one object of more than 2 GiB in total (three 800 MiB arrays) over TCP', async function () {
    const masters = await createMasters(2);
    try {
      const part = 800 * 1024 * 1024;
      const make = (seed: number) => {
        const bytes = new Uint8Array(part);
        for (let i = 0; i < part; i += 1 << 20) bytes[i] = (seed + i / (1 << 20)) % 256;
        bytes[part - 1] = seed;
        return bytes;
      };
      await runGroup(masters, [1, 1], nextGroup(), async (member, group, rank) => {
        if (rank === 0) {
          await member.sendSync(group, { parts: [make(1), make(2), make(3)] }, 1);
          return;
        }
        const received = await member.receive<{ parts: Uint8Array[] }>(group, 0);
        expect(received.parts.reduce((total, array) => total + array.byteLength, 0)).to.equal(3 * part);
        received.parts.forEach((array, index) => {
          expect(array).to.be.instanceOf(Uint8Array);
          for (let i = 0; i < part; i += 1 << 20) expect(array[i]).to.equal((index + 1 + i / (1 << 20)) % 256);
          expect(array[part - 1]).to.equal(index + 1);
        });
      });
    } finally {
      await closeAll(masters);
    }
  });
});
