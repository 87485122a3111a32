/**
 * The two levels of a hierarchical collective (Open MPI's coll/han; the MPJ papers' multi-core
 * collectives): the members of each host (which the engine connects over shared memory), and one
 * leader per host (which it connects over the network). A hierarchical algorithm runs a flat one,
 * chosen by the selection tables for that level, on each level in turn; this file computes the
 * levels once, and each hierarchical variant is a few lines in its collective's folder.
 *
 * Hosts are numbered by their lowest rank, a host's members listed in rank order. A host's leader
 * is its lowest rank, except on the root's host, where the root leads: rooted collectives then
 * need no extra step to or from the root.
 */
import type { CollectiveContext } from './context.js';
import type { CollectiveGroup } from './participants.js';
import type { Layout } from './algorithm.js';

/** Where a group's ranks are, computed once per group (groups are immutable). */
export interface Topology {
  readonly layout: Layout;
  /** Host number of each rank. */
  readonly hostOf: readonly number[];
  /** Each host's ranks, ascending, by host number. */
  readonly ranksOn: readonly (readonly number[])[];
}

const topologies = new WeakMap<CollectiveGroup, Topology>();

/** `group`'s hosts and the ranks on each. */
export function topologyOf(group: CollectiveGroup): Topology {
  let topology = topologies.get(group);
  if (topology === undefined) {
    const numbers = new Map<string, number>();
    const ranksOn: number[][] = [];
    const hostOf = group.hosts.map((host, rank) => {
      let number = numbers.get(host);
      if (number === undefined) {
        number = ranksOn.length;
        numbers.set(host, number);
        ranksOn.push([]);
      }
      (ranksOn[number] as number[]).push(rank);
      return number;
    });
    topology = { layout: { hosts: ranksOn.length, perHost: Math.max(...ranksOn.map((ranks) => ranks.length)) }, hostOf, ranksOn };
    topologies.set(group, topology);
  }
  return topology;
}

/** One member's view of the two levels of a call. */
export interface Levels {
  /** The members of this member's host, in rank order. */
  readonly local: CollectiveContext;
  /** The host leader's rank in `local`. */
  readonly localLeader: number;
  /** One leader per host, by host number; undefined unless this member leads its host. */
  readonly leaders: CollectiveContext | undefined;
  /** The root's host number, which is the root's rank in `leaders` (0 without a root). */
  readonly rootHost: number;
  /** Each host's ranks, ascending, by host number: where the elements of `leaders`' bundles belong. */
  readonly ranksOn: readonly (readonly number[])[];
}

/** The levels of `context`'s call; `root` leads its host (-1: no root). */
export function levelsOf(context: CollectiveContext, root = -1): Levels {
  const { hostOf, ranksOn } = topologyOf(context.group);
  const rootHost = root < 0 ? 0 : (hostOf[root] as number);
  const leaderOf = (host: number) => (host === rootHost && root >= 0 ? root : (ranksOn[host] as readonly number[])[0] as number);
  const host = hostOf[context.rank] as number;
  const onHost = ranksOn[host] as readonly number[];
  const local = context.level('intra-host', onHost, { hosts: 1, perHost: onHost.length });
  const leader = leaderOf(host);
  const leaders = leader === context.rank ? context.level('inter-host', ranksOn.map((_, other) => leaderOf(other)), { hosts: ranksOn.length, perHost: 1 }) : undefined;
  return { local, localLeader: onHost.indexOf(leader), leaders, rootHost, ranksOn };
}

/** The group's elements by rank, from one bundle per host (each in its host's rank order). */
export function unbundle<E>(bundles: readonly (readonly E[])[], ranksOn: readonly (readonly number[])[]): E[] {
  const elements = new Array<E>(ranksOn.reduce((count, ranks) => count + ranks.length, 0));
  bundles.forEach((bundle, host) => bundle.forEach((element, index) => (elements[(ranksOn[host] as readonly number[])[index] as number] = element)));
  return elements;
}
