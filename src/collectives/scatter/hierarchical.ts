/**
 * Hierarchical scatter (Open MPI coll/han): the root scatters one bundle per host to the leaders
 * (itself leading its own host), each bundle holding the elements of that host's members in rank
 * order; then each leader scatters its bundle within its host (the root, holding its own host's
 * bundle, does both at once).
 */
import type { CollectiveContext } from '../context.js';
import { levelsOf } from '../hierarchy.js';

export async function scatterHierarchical<E>(context: CollectiveContext, elements: readonly E[] | null, root: number): Promise<E> {
  const { local, localLeader, leaders, rootHost, ranksOn } = levelsOf(context, root);
  const bundles = elements === null ? null : ranksOn.map((ranks) => ranks.map((rank) => elements[rank] as E));
  const withinHost = (bundle: readonly E[] | null) => local.choose('scatter').algorithm.run(local, bundle, localLeader);
  if (leaders === undefined) return withinHost(null);
  const acrossHosts = leaders.choose('scatter').algorithm.run(leaders, bundles, rootHost);
  // The root holds its own host's bundle already: it scatters to the other leaders and within its host at once.
  if (context.rank === root && bundles !== null) return (await Promise.all([acrossHosts, withinHost(bundles[rootHost] as readonly E[])]))[1];
  return withinHost(await acrossHosts);
}
