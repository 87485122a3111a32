/**
 * reduceScatter through the group's collective segment on its host (segment/): every member writes
 * its elements once, as one stream; each copies out of every other member's stream the element
 * for itself and combines them in rank order.
 */
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';
import { combineInOrder, othersThan, writeAndRead } from '../segment/values.js';

export async function reduceScatterSharedMemory<E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>): Promise<E> {
  return throughSegment(context, async (call) => {
    const values = await writeAndRead<E>(context, call, elements, othersThan(call.size, call.rank), call.rank);
    values[call.rank] = elements[call.rank] as E;
    return combineInOrder(op, values as E[], call.rank);
  });
}
