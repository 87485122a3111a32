/**
 * Hierarchical allReduce (Open MPI coll/han): each host reduces to its leader, the leaders
 * allReduce among themselves, and each leader broadcasts the result within its host. Operands
 * combine host by host, not in rank order, so it is not chosen for a non-commutative reduction.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { levelsOf } from '../hierarchy.js';

export async function allReduceHierarchical<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const { local, localLeader, leaders } = levelsOf(context);
  const partial = await local.choose('reduce').algorithm.run(local, value, op, localLeader);
  const total = leaders ? await leaders.choose('allReduce').algorithm.run(leaders, partial as T, op) : value;
  return local.choose('broadcast').algorithm.run(local, total, localLeader);
}
