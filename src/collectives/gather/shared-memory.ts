/**
 * Gather through the group's collective segment on its host (segment/): every member but the root
 * writes its element once, and the root copies them all out.
 */
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';
import { othersThan, writeAndRead } from '../segment/values.js';

export async function gatherSharedMemory<E>(context: CollectiveContext, element: E, root: number): Promise<E[] | null> {
  return throughSegment(context, async (call) => {
    if (call.rank !== root) {
      await writeAndRead(context, call, [element], [], 0);
      return null;
    }
    const elements = await writeAndRead<E>(context, call, undefined, othersThan(call.size, root), 0);
    elements[root] = element;
    return elements as E[];
  });
}
