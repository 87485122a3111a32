/**
 * Hierarchical broadcast (Open MPI coll/han; MPJ's multi-core broadcast): the root broadcasts to
 * one leader per host (itself leading its own host), then each leader broadcasts within its host.
 * With a tree among the leaders, exactly hosts − 1 messages cross between hosts.
 */
import type { CollectiveContext } from '../context.js';
import { levelsOf } from '../hierarchy.js';

export async function broadcastHierarchical<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const { local, localLeader, leaders, rootHost } = levelsOf(context, root);
  const received = leaders ? await leaders.choose('broadcast').algorithm.run(leaders, value, rootHost) : value;
  return local.choose('broadcast').algorithm.run(local, received, localLeader);
}
