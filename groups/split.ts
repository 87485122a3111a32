/**
 * MPI_Comm_split for ColGroups: every member of `group` calls it; members that pass the same
 * color form a new group, ranked by key and then by their old rank.
 */
import type { ColGroup } from './col-group.js';
import type { ColGroupMaster } from './col-group-master.js';
import { memberCore } from './col-member.js';
import type { ColMember } from './col-member.js';
import { DividableArray } from '../dividable/dividable-array.js';

type Choice = readonly [color: number, key: number];

export async function splitGroup(master: ColGroupMaster, group: ColGroup, member: ColMember, color: number, key: number): Promise<ColGroup> {
  if (!Number.isInteger(color) || color < 0) throw new RangeError(`split: color must be a non-negative integer, got ${color}`);
  if (!Number.isInteger(key)) throw new RangeError(`split: key must be an integer, got ${key}`);
  const core = memberCore(member);
  const rank = core.rankIn(group, 'split');
  // Numbers this split among the group's collective calls: the same on every member, so the new group's name is too.
  const tag = core.nextCollectiveTag(group);
  const choices = (await member.allGather(group, new DividableArray(new Array<Choice>(group.size())), [[color, key] as Choice])).array as Choice[];
  const sameColor = choices
    .map(([memberColor, memberKey], oldRank) => ({ memberColor, memberKey, oldRank }))
    .filter((choice) => choice.memberColor === color)
    .sort((a, b) => a.memberKey - b.memberKey || a.oldRank - b.oldRank);
  const newRank = sameColor.findIndex((choice) => choice.oldRank === rank);
  const name = `${group.name}/split#${tag}/${color}`;
  master.join(name, member, [newRank]);
  return master.getGroup(name, sameColor.length);
}
