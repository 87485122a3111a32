/**
 * The barrier through the group's collective segment on its host (segment/): each member says it
 * arrived, in its control line, and waits until every other member's line says so too. No data,
 * no messages (but the segment's setup on the group's first call).
 */
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';

export async function barrierSharedMemory(context: CollectiveContext): Promise<void> {
  await throughSegment(context, async (call) => {
    for (let member = 0; member < call.size; member += 1) if (member !== call.rank) await call.arrival(member);
  });
}
