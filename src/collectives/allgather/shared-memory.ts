/**
 * allGather through the group's collective segment on its host (segment/): every member writes
 * its element once, and copies out every other member's.
 */
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';
import { othersThan, writeAndRead } from '../segment/values.js';

export async function allGatherSharedMemory<E>(context: CollectiveContext, element: E): Promise<E[]> {
  return throughSegment(context, async (call) => {
    const elements = await writeAndRead<E>(context, call, [element], othersThan(call.size, call.rank), 0);
    elements[call.rank] = element;
    return elements as E[];
  });
}
