/**
 * Hierarchical allGather (Open MPI coll/han): each host gathers its members' elements at its
 * leader, the leaders allGather those bundles, and each leader broadcasts the whole, in rank
 * order, within its host.
 */
import type { CollectiveContext } from '../context.js';
import { unbundle, levelsOf } from '../hierarchy.js';

export async function allGatherHierarchical<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const { local, localLeader, leaders, ranksOn } = levelsOf(context);
  const bundle = await local.choose('gather').algorithm.run(local, element, localLeader);
  const whole = leaders ? unbundle(await leaders.choose('allGather').algorithm.run(leaders, bundle as E[]), ranksOn) : null;
  return local.choose('broadcast').algorithm.run(local, whole, localLeader) as Promise<E[]>;
}
