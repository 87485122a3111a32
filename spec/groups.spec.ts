import { expect } from 'chai';
import { ColGroupMaster, GroupError, TimeoutError } from '../src/index.js';
import type { ColGroup } from '../src/index.js';
import { TestMember, ccjrun, closeAll, createMasters, fixture, run, runGroup } from './harness.js';

describe('two-phase groups', function () {
  for (const perProcess of [[3], [1, 2], [2, 2], [1, 3, 2, 1]]) {
    it(`ranks ${perProcess.length} process(es) with ${perProcess.join('+')} members by process, then addMember order`, async function () {
      const masters = await createMasters(perProcess.length);
      try {
        const seen = await runGroup(masters, perProcess, 'g', async (member, group, rank) => ({ rank, size: group.size(), process: group.processOf(rank), localId: (member as TestMember).index }));
        const expected = perProcess.flatMap((count, process) => [...Array(count).keys()].map((localId) => ({ process, localId })));
        expect(seen.map(({ process, localId }) => ({ process, localId }))).to.deep.equal(expected);
        expect(seen.map((entry) => entry.size)).to.deep.equal(expected.map(() => expected.length));
      } finally {
        await closeAll(masters);
      }
    });
  }

  it('forms several groups at once, with a member in several groups', async function () {
    const masters = await createMasters(2);
    try {
      const groupsOf = new Map<TestMember, ColGroup[]>();
      const members = masters.flatMap((master) =>
        [0, 1].map(() => {
          const member = new TestMember(async (self) => {
            groupsOf.set(self, await Promise.all([master.getGroup('world', 4), master.getGroup(master.processRank === 0 ? 'left' : 'right', 2)]));
          });
          master.addMember('world', member);
          master.addMember(master.processRank === 0 ? 'left' : 'right', member);
          return member;
        }),
      );
      await Promise.all(members.map((member) => member.start()));
      const [world, left] = groupsOf.get(members[1]) as ColGroup[];
      expect(world.getRank(members[1])).to.equal(1);
      expect(left.getRank(members[1])).to.equal(1);
      expect(world.context).to.not.equal(left.context);
      const [, right] = groupsOf.get(members[2]) as ColGroup[];
      expect(right.getRank(members[2])).to.equal(0);
      expect(() => right.getRank(members[0])).to.throw(GroupError, /is not a member of group 'right'/);
    } finally {
      await closeAll(masters);
    }
  });

  it('rejects getGroup with a TimeoutError saying how many joined', async function () {
    const masters = await createMasters(2, { timeoutMs: 300 });
    try {
      masters[0].addMember('short', new TestMember());
      masters[1].addMember('short', new TestMember());
      const error = await masters[1].getGroup('short', 3).then(() => undefined, (caught: unknown) => caught);
      expect(error).to.be.instanceOf(TimeoutError);
      expect((error as Error).message).to.match(/group 'short': only 2 of 3 members joined within 300 ms/);
    } finally {
      await Promise.all(masters.map((master) => master.close()));
    }
  });

  it('refuses joining an active group, joining twice, too many members and disagreeing sizes', async function () {
    const masters = await createMasters(2);
    try {
      const [a, b] = [new TestMember(), new TestMember()];
      masters[0].addMember('active', a);
      masters[1].addMember('active', b);
      await Promise.all([masters[0].getGroup('active', 2), masters[1].getGroup('active', 2)]);
      expect(() => masters[0].addMember('active', new TestMember())).to.throw(GroupError, /cannot join group 'active': it is already active/);
      masters[0].addMember('twice', a);
      expect(() => masters[0].addMember('twice', a)).to.throw(GroupError, /already joined group 'twice'/);

      for (let i = 0; i < 3; i += 1) masters[0].addMember('crowded', new TestMember());
      const crowded = await masters[0].getGroup('crowded', 2).then(() => undefined, (caught: unknown) => caught);
      expect(crowded).to.be.instanceOf(GroupError);
      expect((crowded as Error).message).to.match(/3 members joined, but getGroup asked for 2/);

      // A join racing with the group's activation elsewhere fails at addMember or at getGroup.
      masters[0].addMember('late', new TestMember());
      await masters[0].getGroup('late', 1);
      const late = await (async () => {
        masters[1].addMember('late', new TestMember());
        return masters[1].getGroup('late', 1);
      })().then(() => undefined, (caught: unknown) => caught);
      expect(late).to.be.instanceOf(GroupError);
      expect((late as Error).message).to.match(/already active/);

      masters[0].addMember('sizes', new TestMember());
      masters[1].addMember('sizes', new TestMember());
      const first = masters[0].getGroup('sizes', 3);
      const second = await masters[1].getGroup('sizes', 2).then(() => undefined, (caught: unknown) => caught);
      expect(second).to.be.instanceOf(GroupError);
      expect((second as Error).message).to.match(/getGroup\('sizes', 2\) disagrees with getGroup\('sizes', 3\)/);
      expect(await masters[0].getGroup('sizes', 4).then(() => undefined, (caught: unknown) => caught)).to.be.instanceOf(GroupError);
      first.catch(() => {});
      expect(() => masters[0].getGroup('bad', 0)).to.not.throw();
      await masters[0].getGroup('bad', 0).then(
        () => expect.fail('size 0 accepted'),
        (error: unknown) => expect(error).to.be.instanceOf(RangeError),
      );
    } finally {
      await Promise.all(masters.map((master) => master.close()));
    }
  });

  it('copies a group into a reordered subset, and splits by color', async function () {
    const masters = await createMasters(2);
    try {
      const results = await runGroup(masters, [2, 3], 'base', async (member, group, rank) => {
        const master = masters[group.processOf(rank)];
        const copy = master.copyGroup(group, 'odd-reversed').include([3, 1]);
        const odd = rank % 2 === 1 ? await copy.activate(member) : undefined;
        const split = await master.split(group, member, rank % 2, -rank);
        return { odd: odd?.getRank(member), split: split.getRank(member), splitSize: split.size() };
      });
      expect(results.map((result) => result.odd)).to.deep.equal([undefined, 1, undefined, 0, undefined]);
      // Color 0: ranks 0, 2, 4 with keys 0, -2, -4 → new order 4, 2, 0; color 1: ranks 1, 3 → 3, 1.
      expect(results.map((result) => result.split)).to.deep.equal([2, 1, 1, 0, 0]);
      expect(results.map((result) => result.splitSize)).to.deep.equal([3, 2, 3, 2, 3]);
    } finally {
      await closeAll(masters);
    }
  });

  it('gives every process of a 4-process ccjrun job the same ranks', async function () {
    const counts = [1, 3, 2, 1];
    const result = await run(process.execPath, [ccjrun, '-n', '4', fixture('groups-job'), counts.join(',')]);
    expect(result.code, result.stderr).to.equal(0);
    const lines = result.stdout
      .split('\n')
      .filter((line) => line.includes('{'))
      .map((line) => JSON.parse(line.slice(line.indexOf('{'))) as { process: number; index: number; rank: number; size: number; reversedRank: number });
    expect(lines).to.have.length(7);
    let expectedRank = 0;
    counts.forEach((count, process) => {
      for (let index = 0; index < count; index += 1) {
        const line = lines.find((entry) => entry.process === process && entry.index === index);
        expect(line).to.deep.equal({ process, index, rank: expectedRank, size: 7, reversedRank: 6 - expectedRank });
        expectedRank += 1;
      }
    });
  });

  it('builds a one-process job without any launcher', async function () {
    const master = await ColGroupMaster.create({ autoClose: false, processRank: 0, processCount: 1 });
    try {
      expect(master.processCount).to.equal(1);
      const member = new TestMember();
      master.addMember('solo', member);
      const group = await master.getGroup('solo', 1);
      expect(group.getRank(member)).to.equal(0);
      await member.done();
    } finally {
      await master.close();
    }
  });
});
