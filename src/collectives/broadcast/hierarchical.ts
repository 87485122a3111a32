/**
 * Hierarchical broadcast (Open MPI coll/han; MPJ's multi-core broadcast): the root broadcasts to
 * one leader per host (itself leading its own host), then each leader broadcasts within its host;
 * the root does both at once. With a tree among the leaders, exactly hosts − 1 messages cross
 * between hosts.
 */
import type { CollectiveContext } from '../context.js';
import { levelsOf } from '../hierarchy.js';

export async function broadcastHierarchical<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const { local, localLeader, leaders, rootHost } = levelsOf(context, root);
  const withinHost = (from: T) => local.choose('broadcast').algorithm.run(local, from, localLeader);
  if (leaders === undefined) return withinHost(value);
  const acrossHosts = leaders.choose('broadcast').algorithm.run(leaders, value, rootHost);
  // The root has the value already: it serves the other hosts' leaders and its own host at once
  // (the two levels share no pair of members).
  if (context.rank === root) return (await Promise.all([acrossHosts, withinHost(value)]))[1];
  return withinHost(await acrossHosts);
}
