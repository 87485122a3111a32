/**
 * Scan through the group's collective segment on its host (segment/): every member but the last
 * writes its value once, and each combines the values of the ranks up to its own in rank order.
 */
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';
import { combineInOrder, writeAndRead } from '../segment/values.js';

export async function scanSharedMemory<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  return throughSegment(context, async (call) => {
    const lower = Array.from({ length: call.rank }, (_, rank) => rank);
    const values = await writeAndRead<T>(context, call, call.rank < call.size - 1 ? [value] : undefined, lower, 0);
    values[call.rank] = value;
    return combineInOrder(op, values.slice(0, call.rank + 1) as T[], call.rank);
  });
}
