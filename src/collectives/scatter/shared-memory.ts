/**
 * Scatter through the group's collective segment on its host (segment/): the root writes every
 * rank's element once, as one stream, and each member copies out its own.
 */
import type { CollectiveContext } from '../context.js';
import { throughSegment } from '../segment/call.js';
import { writeAndRead } from '../segment/values.js';

export async function scatterSharedMemory<E>(context: CollectiveContext, elements: readonly E[] | null, root: number): Promise<E> {
  return throughSegment(context, async (call) => {
    if (call.rank === root) {
      const all = elements as readonly E[];
      await writeAndRead(context, call, all, [], 0);
      return all[root] as E;
    }
    return (await writeAndRead<E>(context, call, undefined, [root], call.rank))[root] as E;
  });
}
