/**
 * The group a collective call runs on and the member that makes it, as the collectives see them.
 * The API's ColGroup and MemberCore satisfy these; the collectives never reach up to the API.
 */
import type { CallOwner, Route } from '../engine/calls.js';
import type { CollectiveName } from './algorithm.js';
import type { Endpoint } from './endpoint.js';

/** An active group (ColGroup), as far as its collective calls need it. */
export interface CollectiveGroup {
  readonly name: string;
  /** Job-wide id carried by every message of this group. */
  readonly context: number;
  /** What the engine needs to route and name this group's messages. */
  readonly route: Route;
  /** The host identity of each rank's endpoint (hierarchical collectives group ranks by it). */
  readonly hosts: readonly string[];
  size(): number;
  /** RangeError unless `rank` is a rank of this group; `what` and `role` name the argument. */
  checkRank(rank: number, what: string, role?: string): void;
  /** The group's algorithm override for `collective`, if any. */
  algorithmFor(collective: CollectiveName): string | undefined;
}

/** What a collective call's sends and receives need of the member that makes it: the engine's owner of its calls, and its endpoint. */
export interface CollectiveCaller extends CallOwner {
  /** The endpoint the member was added to; CCJError naming `operation` if it never was. */
  endpoint(operation: string): Endpoint;
}

/** What a collective operation needs of the calling member (MemberCore), on groups of type `G`. */
export interface CollectiveMember<G extends CollectiveGroup> extends CollectiveCaller {
  /** The member's rank in `group`; GroupError naming `operation` if it is not a member. */
  rankIn(group: G, operation: string): number;
  /** The tag of the member's next collective operation on `group` (CCJ 3.1). */
  nextCollectiveTag(group: G): number;
}
