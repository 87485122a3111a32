/**
 * CCJ's inactive copy of an active group: pick and order members of the source group
 * (MPI_Group_incl / MPI_Group_excl), then each chosen member activates it under the new name.
 */
import type { ColGroup } from './col-group.js';
import type { ColGroupMaster } from './col-group-master.js';
import type { ColMember } from './col-member.js';
import { GroupError } from '../src/base/errors.js';

/**
 * An inactive copy of an active group (CCJ's inactive groups), from {@link ColGroupMaster.copyGroup}:
 * choose and order members of the source group, then every chosen member activates it under the
 * new name. Each endpoint builds its own copy; all must choose the same members.
 */
export class InactiveGroup {
  /** Ranks of the source group, in the order they will have in the new group. */
  private ranks: number[];

  /** @internal Made by ColGroupMaster.copyGroup. */
  constructor(
    private readonly master: ColGroupMaster,
    /** The active group this is a copy of. */
    readonly source: ColGroup,
    /** The name the new group will be activated under. */
    readonly name: string,
  ) {
    if (typeof name !== 'string' || name === '') throw new TypeError(`copyGroup: the new name must be a non-empty string, got ${JSON.stringify(name)}`);
    this.ranks = [...Array(source.size()).keys()];
  }

  /** The number of members chosen so far. */
  size(): number {
    return this.ranks.length;
  }

  /** Source-group ranks of the members, in new-rank order. */
  members(): readonly number[] {
    return this.ranks;
  }

  /**
   * Keeps only these source ranks, in this order (they become ranks 0, 1, ...).
   *
   * @throws {RangeError} for a rank outside the source group or a repeated rank.
   */
  include(ranks: readonly number[]): this {
    ranks.forEach((rank) => this.source.checkRank(rank, 'include: rank'));
    if (new Set(ranks).size !== ranks.length) throw new RangeError(`include: ranks ${JSON.stringify(ranks)} repeat a rank`);
    this.ranks = [...ranks];
    return this;
  }

  /**
   * Drops these source ranks, keeping the others in order.
   *
   * @throws {RangeError} for a rank outside the source group.
   */
  exclude(ranks: readonly number[]): this {
    ranks.forEach((rank) => this.source.checkRank(rank, 'exclude: rank'));
    this.ranks = this.ranks.filter((rank) => !ranks.includes(rank));
    return this;
  }

  /**
   * Called by every member of the new group: joins it and resolves with the active group.
   *
   * @throws {@link GroupError} (rejects) if `member` is not among the chosen members, or none are chosen.
   */
  activate(member: ColMember): Promise<ColGroup> {
    const newRank = this.ranks.indexOf(this.source.getRank(member));
    if (newRank < 0) return Promise.reject(new GroupError(`${member.constructor.name} (rank ${this.source.getRank(member)} of '${this.source.name}') is not in the copy '${this.name}'`));
    if (this.ranks.length === 0) return Promise.reject(new GroupError(`copy '${this.name}' has no members`));
    this.master.join(this.name, member, [newRank]);
    return this.master.getGroup(this.name, this.ranks.length);
  }
}
