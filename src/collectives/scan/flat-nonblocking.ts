/**
 * nbFT scan (Taboada et al. 2010, Table 1, MPJ Express's scan): each rank posts receives from every lower
 * rank, sends its value to every higher rank at once, and combines the lower values in rank
 * order, its own last. One round of latency, O(size^2) messages: for few members, small values.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { postReceive } from '../exchange.js';

export async function scanFlatNonBlocking<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const { rank, size } = context;
  const lower = Array.from({ length: rank }, (_, source) => postReceive<T>(context, source));
  const sends = Array.from({ length: size - rank - 1 }, (_, index) => context.isend(rank + 1 + index, value));
  if (rank === 0) {
    await Promise.all(sends);
    return value;
  }
  let prefix: T = await lower[0];
  for (let source = 1; source < rank; source += 1) prefix = combineReceived(op, await lower[source], prefix, false);
  await Promise.all(sends);
  return combineReceived(op, prefix, value, true);
}
