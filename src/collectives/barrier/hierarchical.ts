/**
 * Hierarchical barrier (Open MPI coll/han): each host's members report to their leader, the
 * leaders run a barrier among themselves, and each leader releases its host. One message per host
 * crosses the network in each direction of a flat barrier among the leaders.
 */
import type { CollectiveContext } from '../context.js';
import { levelsOf } from '../hierarchy.js';

export async function barrierHierarchical(context: CollectiveContext): Promise<void> {
  const { local, localLeader, leaders } = levelsOf(context);
  await local.choose('gather').algorithm.run(local, null, localLeader);
  if (leaders) await leaders.choose('barrier').algorithm.run(leaders);
  await local.choose('broadcast').algorithm.run(local, null, localLeader);
}
