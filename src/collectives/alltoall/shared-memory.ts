/**
 * allToAll through the group's collective segment on its host (segment/): every member writes its
 * outgoing elements once, as one stream, and copies out of every other member's stream the
 * element for itself.
 */
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';
import { othersThan, writeAndRead } from '../segment/values.js';

export async function allToAllSharedMemory<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  return throughSegment(context, async (call) => {
    const received = await writeAndRead<E>(context, call, outgoing, othersThan(call.size, call.rank), call.rank);
    received[call.rank] = outgoing[call.rank] as E;
    return received as E[];
  });
}
