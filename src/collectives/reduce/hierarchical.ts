/**
 * Hierarchical reduce (Open MPI coll/han): each host reduces to its leader (the root on its own
 * host), then the leaders reduce to the root. Operands combine host by host, not in rank order,
 * so it is not chosen for a non-commutative reduction.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { levelsOf } from '../hierarchy.js';

export async function reduceHierarchical<T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number): Promise<T | null> {
  const { local, localLeader, leaders, rootHost } = levelsOf(context, root);
  const partial = await local.choose('reduce').algorithm.run(local, value, op, localLeader);
  return leaders ? leaders.choose('reduce').algorithm.run(leaders, partial as T, op, rootHost) : null;
}
