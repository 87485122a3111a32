/**
 * Hierarchical gather (Open MPI coll/han): each host gathers its members' elements at its leader
 * (the root on its own host), then the leaders gather those bundles at the root, which puts the
 * elements back in rank order. One message per other host reaches the root's host.
 */
import type { CollectiveContext } from '../context.js';
import { unbundle, levelsOf } from '../hierarchy.js';

export async function gatherHierarchical<E>(context: CollectiveContext, element: E, root: number): Promise<E[] | null> {
  const { local, localLeader, leaders, rootHost, ranksOn } = levelsOf(context, root);
  const bundle = await local.choose('gather').algorithm.run(local, element, localLeader);
  if (!leaders) return null;
  const bundles = await leaders.choose('gather').algorithm.run(leaders, bundle as E[], rootHost);
  return bundles === null ? null : unbundle(bundles, ranksOn);
}
