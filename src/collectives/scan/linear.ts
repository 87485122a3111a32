/** Inclusive scan along a chain: rank r combines rank r-1's prefix with its own value, in rank order. */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';

export async function scanLinear<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const { rank, size } = context;
  const prefix = rank === 0 ? value : combineReceived(op, await context.receive<T>(rank - 1), value, true);
  if (rank + 1 < size) await context.send(rank + 1, prefix);
  return prefix;
}
