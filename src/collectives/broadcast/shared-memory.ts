/**
 * Broadcast through the group's collective segment on its host (segment/): the root writes the
 * value once (a typed array's bytes, anything else serialized once) into its slot, and every
 * other member copies it out, chunk by chunk for a value larger than a chunk.
 */
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';
import { writeAndRead } from '../segment/values.js';

export async function broadcastSharedMemory<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  return throughSegment(context, async (call) => {
    if (call.rank === root) {
      await writeAndRead(context, call, [value], [], 0);
      return value;
    }
    return (await writeAndRead<T>(context, call, undefined, [root], 0))[root] as T;
  });
}
