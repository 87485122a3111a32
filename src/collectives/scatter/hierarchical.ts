/**
 * Hierarchical scatter (Open MPI coll/han): the root scatters one bundle per host to the leaders
 * (itself leading its own host), each bundle holding the elements of that host's members in rank
 * order; then each leader scatters its bundle within its host.
 */
import type { CollectiveContext } from '../context.js';
import { levelsOf } from '../hierarchy.js';

export async function scatterHierarchical<E>(context: CollectiveContext, elements: readonly E[] | null, root: number): Promise<E> {
  const { local, localLeader, leaders, rootHost, ranksOn } = levelsOf(context, root);
  const bundles = elements === null ? null : ranksOn.map((ranks) => ranks.map((rank) => elements[rank] as E));
  const bundle = leaders ? await leaders.choose('scatter').algorithm.run(leaders, bundles, rootHost) : null;
  return local.choose('scatter').algorithm.run(local, bundle, localLeader);
}
