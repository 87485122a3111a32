/** Members of one endpoint of a test job, as the in-process harness's runGroup makes them for several. */
import type { ColGroup, ColGroupMaster, ColMember } from '../../src/index.js';
import { TestMember } from '../harness.js';

/** Spreads `count` members over `endpoints` endpoints, round robin. */
export function spread(count: number, endpoints: number): number[] {
  return Array.from({ length: endpoints }, (_, endpoint) => Math.floor(count / endpoints) + (endpoint < count % endpoints ? 1 : 0));
}

/**
 * Joins `perEndpoint[master.rank]` members of this endpoint to group `name` (of all the
 * endpoints' members), runs `body` in each, and resolves with their results in rank order.
 */
export async function runHere<T>(master: ColGroupMaster, perEndpoint: readonly number[], name: string, body: (member: ColMember, group: ColGroup, rank: number) => Promise<T>): Promise<T[]> {
  const size = perEndpoint.reduce((a, b) => a + b, 0);
  const results: { rank: number; value: T }[] = [];
  const members = Array.from({ length: perEndpoint[master.rank] ?? 0 }, () => {
    const member: TestMember = new TestMember(async (self) => {
      const group = await master.getGroup(name, size);
      const rank = group.getRank(self);
      results.push({ rank, value: await body(self, group, rank) });
    });
    master.addMember(name, member);
    return member;
  });
  await Promise.all(members.map((member) => member.start()));
  return results.sort((a, b) => a.rank - b.rank).map((result) => result.value);
}

/** One member per endpoint in group `name`. */
export function onePerEndpoint(master: ColGroupMaster): number[] {
  return Array.from({ length: master.size }, () => 1);
}
