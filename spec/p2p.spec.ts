import { expect } from 'chai';
import { closeAll, createMasters, mastersForSuite, runGroup } from './harness.js';
import { PAYLOADS, expectSame } from './payloads.js';

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

      for (const payload of PAYLOADS.filter((candidate) => serializer === 'v8' || !candidate.v8Only)) {
        it(`sendSync/receive, sendAsync/receive, sendReceive and rendezvous carry ${payload.name}`, async function () {
          const expected = payload.make();
          await runGroup(masters(), placement.perProcess, nextGroup(), async (member, group, rank) => {
            const peer = 1 - rank;
            if (rank === 0) {
              await member.sendSync(group, payload.make(), peer);
              expectSame(await member.receive(group, peer), expected);
            } else {
              expectSame(await member.receive(group, peer), expected);
              await member.sendAsync(group, payload.make(), peer);
            }
            expectSame(await member.sendReceive(group, payload.make(), peer, peer), expected);
            expectSame(await member.rendezvous(group, payload.make(), peer), expected);
          });
        });
      }

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
