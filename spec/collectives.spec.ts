import { expect } from 'chai';
import type { ColMember, ColGroup } from '../src/index.js';
import { CollectiveMismatchError } from '../src/base/errors.js';
import { Reductions } from '../reduction/index.js';
import { DividableArray } from '../dividable/index.js';
import { mastersForSuite, runGroup } from './harness.js';
import { COLLECTIVE_CHECKS } from './collective-checks.js';
import { spread } from './scenarios/members.js';

for (const placement of [
  { name: 'in one process', processes: 1 },
  { name: 'over three processes (TCP)', processes: 3 },
]) {
  describe(`collectives ${placement.name}`, function () {
    const masters = mastersForSuite(placement.processes);
    let counter = 0;
    const inGroup = <T>(size: number, body: (member: ColMember, group: ColGroup, rank: number) => Promise<T>) =>
      runGroup(masters(), spread(size, placement.processes), `collectives-${counter++}`, body);

    for (let size = 1; size <= 9; size += 1) {
      describe(`${size} member${size > 1 ? 's' : ''}`, function () {
        for (const check of COLLECTIVE_CHECKS) {
          it(check.name, async function () {
            await inGroup(size, (member, group, rank) => check.body(member, group, rank, size));
          });
        }
      });
    }

    it('rejects members calling different collectives, naming both sides', async function () {
      // Both calls send to and receive from the other member, so both sides notice.
      const errors = await inGroup(2, async (member, group, rank) => {
        try {
          if (rank === 0) await member.barrier(group, { algorithm: 'hypercube' });
          else await member.allToAll(group, new DividableArray([1, 2]), new DividableArray([0, 0]), { algorithm: 'flat' });
          return undefined;
        } catch (error) {
          return error as Error;
        }
      });
      for (const error of errors) expect(error).to.be.instanceOf(CollectiveMismatchError);
      expect(errors[0]?.message).to.match(/barrier: receive from rank 1 of group '.*' \(rank 0 here\): expected barrier\(\) hypercube, but the sender called allToAll\(\) flat/);
      expect(errors[1]?.message).to.match(/expected allToAll\(\) flat, but the sender called barrier\(\) hypercube/);
    });

    it('rejects bad arguments before sending anything', async function () {
      await inGroup(2, async (member, group) => {
        await member.broadcast(group, 1, 2).then(() => expect.fail('root 2 accepted'), (error: Error) => expect(error).to.be.instanceOf(RangeError).with.property('message').that.matches(/broadcast root 2 is not a rank/));
        await member.reduce(group, 1, 'SUM' as never, 0).then(() => expect.fail('a string op accepted'), (error: Error) => expect(error).to.be.instanceOf(TypeError).with.property('message').that.matches(/reduce: SUM is neither a ReductionObject/));
        // Only the root checks its object, before the operation takes a tag, so rank 1 sits it out.
        if (group.getRank(member) === 0) {
          await member.scatter(group, [1, 2] as never, 0).then(
            () => expect.fail('a plain array accepted'),
            (error: Error) => expect(error).to.be.instanceOf(TypeError).with.property('message').that.matches(/scatter: the root object must implement DividableData \(elementAt and setElementAt\), got Array/),
          );
        }
        // Both members still agree on the next operation.
        expect(await member.allReduce(group, 1, Reductions.SUM)).to.equal(2);
      });
    });
  });
}
