/** CCJ's allReduce (3.2.3): reduce to rank 0, then broadcast the result from there. */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { reduceBinomial } from '../reduce/binomial.js';
import { broadcastBinomial } from '../broadcast/binomial.js';

export async function allReduceReduceBroadcast<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const reduced = await reduceBinomial(context, value, op, 0);
  return broadcastBinomial(context, reduced as T, 0);
}
