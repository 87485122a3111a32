/**
 * Reduce through the group's collective segment on its host (segment/). A large typed array under
 * a built-in element-wise reduction is reduced in the segment, each member its block of every
 * member's slot in place, and the root copies the blocks out (segment/blockwise.ts); anything
 * else is written once by every member but the root, which combines what it reads in rank order.
 */
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import type { CollectiveContext } from '../context.js';
import { blockwise } from '../allreduce/blockwise.js';
import { BLOCKWISE_BYTES, reduceInSegment, reduceSmall } from '../segment/blockwise.js';
import { throughSegment } from '../segment/call.js';
import { combineInOrder, othersThan, writeAndRead } from '../segment/values.js';

export async function reduceSharedMemory<T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number): Promise<T | null> {
  return throughSegment(context, async (call) => {
    const blocks = blockwise(value, op);
    if (blocks !== undefined && call.size > 1) {
      const reduced = blocks.array.byteLength >= BLOCKWISE_BYTES ? reduceInSegment(call, blocks.array, blocks.op, call.rank === root) : reduceSmall(call, blocks.array, blocks.op, call.rank === root);
      return (await reduced) as T | null;
    }
    if (call.rank !== root) {
      await writeAndRead(context, call, [value], [], 0);
      return null;
    }
    const values = await writeAndRead<T>(context, call, undefined, othersThan(call.size, root), 0);
    values[root] = value;
    return combineInOrder(op, values as T[], root);
  });
}
