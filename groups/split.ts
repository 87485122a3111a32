/**
 * MPI_Comm_split for ColGroups: every member of `group` calls it; members that pass the same
 * color form a new group, ranked by key and then by their old rank.
 */
import type { ColGroup } from './col-group.js';
import type { ColGroupMaster } from './col-group-master.js';
import { memberCore } from '../src/member.js';
import type { ColMember, MemberCore } from '../src/member.js';

type Choice = readonly [color: number, key: number];

export async function splitGroup(master: ColGroupMaster, group: ColGroup, member: ColMember, color: number, key: number): Promise<ColGroup> {
  if (!Number.isInteger(color) || color < 0) throw new RangeError(`split: color must be a non-negative integer, got ${color}`);
  if (!Number.isInteger(key)) throw new RangeError(`split: key must be an integer, got ${key}`);
  const core = memberCore(member);
  const rank = core.rankIn(group, 'split');
  const tag = core.nextCollectiveTag(group);
  const choices = await exchange(core, group, rank, tag, [color, key]);
  const sameColor = choices
    .map(([memberColor, memberKey], oldRank) => ({ memberColor, memberKey, oldRank }))
    .filter((choice) => choice.memberColor === color)
    .sort((a, b) => a.memberKey - b.memberKey || a.oldRank - b.oldRank);
  const newRank = sameColor.findIndex((choice) => choice.oldRank === rank);
  // The tag is the same on every member (collectives are called in the same order), so the name is too.
  const name = `${group.name}/split#${tag}/${color}`;
  master.join(name, member, [newRank]);
  return master.getGroup(name, sameColor.length);
}

/** Every member's choice, in rank order: gathered at rank 0 and sent back to all. */
async function exchange(core: MemberCore, group: ColGroup, rank: number, tag: number, mine: Choice): Promise<Choice[]> {
  const others = [...Array(group.size()).keys()].filter((other) => other !== 0);
  if (rank !== 0) {
    await core.send(group, rank, 0, tag, mine, 'captured', 'split: send to');
    return core.receive<Choice[]>(group, rank, 0, tag, 'split: receive from');
  }
  const received = await Promise.all(others.map((other) => core.receive<Choice>(group, 0, other, tag, 'split: receive from')));
  const all = [mine, ...received];
  await Promise.all(others.map((other) => core.send(group, 0, other, tag, all, 'borrowed', 'split: send to')));
  return all;
}
