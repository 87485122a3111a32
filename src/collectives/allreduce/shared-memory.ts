/**
 * allReduce through the group's collective segment on its host (segment/). A large typed array
 * under a built-in element-wise reduction is reduced in the segment: each member reduces its block
 * of every member's slot in place, and all copy every block out (segment/blockwise.ts). Anything
 * else is written once by every member, and each combines what it reads in rank order.
 */
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import type { CollectiveContext } from '../context.js';
import { blockwise } from './blockwise.js';
import { BLOCKWISE_BYTES, reduceInSegment, reduceSmall } from '../segment/blockwise.js';
import { throughSegment } from '../segment/call.js';
import { combineInOrder, othersThan, writeAndRead } from '../segment/values.js';

export async function allReduceSharedMemory<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  return throughSegment(context, async (call) => {
    const blocks = blockwise(value, op);
    if (blocks !== undefined && call.size > 1) {
      const reduced = blocks.array.byteLength >= BLOCKWISE_BYTES ? reduceInSegment(call, blocks.array, blocks.op, true) : reduceSmall(call, blocks.array, blocks.op, true);
      return (await reduced) as T;
    }
    const values = await writeAndRead<T>(context, call, [value], othersThan(call.size, call.rank), 0);
    values[call.rank] = value;
    return combineInOrder(op, values as T[], call.rank);
  });
}
