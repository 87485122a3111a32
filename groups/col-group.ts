/**
 * An active, immutable group (CCJ 2.1): a name, a job-wide context id that keeps its messages
 * apart from every other group's, and the members in rank order with the endpoint of each. The
 * collectives see it as their CollectiveGroup (src/collectives/participants.ts).
 */
import type { ColMember } from './col-member.js';
import type { MemberAddress } from '../src/runtime/control-channel.js';
import type { Route } from '../src/engine/calls.js';
import { MAX_GROUP_SIZE } from '../src/engine/matching.js';
import { GroupError } from '../src/base/errors.js';
import { checkAlgorithmName } from '../src/collectives/selection.js';
import type { AlgorithmName } from '../src/collectives/algorithms.js';
import type { CollectiveName } from '../src/collectives/algorithm.js';

/**
 * An active, immutable group of members (CCJ's ColGroup), from {@link ColGroupMaster.getGroup},
 * {@link ColGroupMaster.split} or {@link InactiveGroup.activate}. Its members are numbered 0 to
 * `size() - 1`; every communication call names a group and ranks in it.
 */
export class ColGroup {
  private readonly localRanks = new Map<ColMember, number>();
  private readonly algorithms = new Map<CollectiveName, string>();
  /** @internal Groups are made by ColGroupMaster.getGroup. */
  constructor(
    /** The name the group was formed under. */
    readonly name: string,
    /** @internal Job-wide id carried by every message of this group. */
    readonly context: number,
    private readonly members: readonly MemberAddress[],
    endpointRank: number,
    localMembers: readonly ColMember[],
    private readonly threadCount: number,
    /** @internal What the engine needs to route and name this group's messages. */
    readonly route: Route,
    /** @internal The host identity of each rank's endpoint (hierarchical collectives group ranks by it). */
    readonly hosts: readonly string[],
  ) {
    if (members.length >= MAX_GROUP_SIZE) throw new GroupError(`group '${name}' has ${members.length} members; at most ${MAX_GROUP_SIZE - 1} are supported`);
    members.forEach(([memberEndpoint, localId], rank) => {
      if (memberEndpoint === endpointRank) this.localRanks.set(localMembers[localId] as ColMember, rank);
    });
  }

  /** The number of members of the group, job-wide. */
  size(): number {
    return this.members.length;
  }

  /**
   * The rank of `member`, a member of this endpoint, in this group.
   *
   * @throws {@link GroupError} if `member` is not a member of this group.
   */
  getRank(member: ColMember): number {
    const rank = this.localRanks.get(member);
    if (rank === undefined) throw new GroupError(`${describe(member)} is not a member of group '${this.name}'`);
    return rank;
  }

  /** True when `member`, a member of this endpoint, belongs to this group. */
  has(member: ColMember): boolean {
    return this.localRanks.has(member);
  }

  /** @internal The member's rank, or -1 for a non-member (one lookup, for the hot path). */
  rankOf(member: ColMember): number {
    return this.localRanks.get(member) ?? -1;
  }

  /** The endpoint ({@link ColGroupMaster.rank}) that hosts rank `rank`. */
  endpointOf(rank: number): number {
    return (this.members[rank] as MemberAddress)[0];
  }

  /** The process ({@link ColGroupMaster.processRank}) that hosts rank `rank`. */
  processOf(rank: number): number {
    return Math.floor(this.endpointOf(rank) / this.threadCount);
  }

  /**
   * @internal Throws RangeError unless `rank` is a rank of this group; `what` and `role` name the argument
   * ("sendAsync", "destination"), joined only when the check fails (this runs on every call).
   */
  checkRank(rank: number, what: string, role?: string): void {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.members.length) {
      throw new RangeError(`${what}${role === undefined ? '' : ` ${role}`} ${String(rank)} is not a rank of group '${this.name}' (size ${this.members.length})`);
    }
  }

  /**
   * Runs `collective` on this group, in this endpoint, with `algorithm` (undefined: back to the
   * selection tables); a per-call `{ algorithm }` still wins. Every endpoint must make the same
   * choice: a mismatch is a {@link CollectiveMismatchError} at the first message.
   *
   * @throws {@link ConfigError} for a name that is not an algorithm of `collective` (from JavaScript).
   */
  setAlgorithm<C extends CollectiveName>(collective: C, algorithm: AlgorithmName<C> | undefined): void {
    if (algorithm === undefined) {
      this.algorithms.delete(collective);
      return;
    }
    checkAlgorithmName(collective, algorithm, `group '${this.name}'`);
    this.algorithms.set(collective, algorithm);
  }

  /** @internal The group's algorithm override for `collective`, if any. */
  algorithmFor(collective: CollectiveName): string | undefined {
    return this.algorithms.get(collective);
  }

  /** `ColGroup(name, size n)`. */
  toString(): string {
    return `ColGroup(${this.name}, size ${this.members.length})`;
  }
}

function describe(member: ColMember): string {
  return `member ${member.constructor.name}`;
}
