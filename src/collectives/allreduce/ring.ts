/**
 * Ring allReduce (Baidu/Horovod, NCCL, MPICH's and Open MPI's ring for large vectors; the MPJ papers'
 * BKT reduce-scatter + BKT allgather): the typed array is cut into `size` blocks; in size - 1
 * steps each rank passes a block's partial to its right neighbour and adds its own part of the
 * block coming from the left, then in size - 1 more steps the reduced blocks travel round. Every
 * rank sends about twice the value whatever the size, all links busy at once: the choice for
 * large arrays. All receives are posted up front (nbBKT). Each block is reduced starting at a
 * different rank (rotated order), so rank order does not hold. Values that cannot be cut into
 * blocks (blockwise.ts) go to 'bde-nonblocking'.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import type { TypedArray } from '../../../reduction/reductions.js';
import { postReceive } from '../exchange.js';
import { allocateToFill, copyInto, PieceLayout } from '../typed-array-pieces.js';
import { blockwise } from './blockwise.js';
import { allReduceBdeNonBlocking } from './bde-nonblocking.js';

export async function allReduceRing<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const blocks = blockwise(value, op);
  if (blocks === undefined || context.size === 1) return allReduceBdeNonBlocking(context, value, op);
  return (await ring(context, blocks.array, blocks.op)) as unknown as T;
}

async function ring(context: CollectiveContext, value: TypedArray, op: ReductionObject<TypedArray>): Promise<TypedArray> {
  const { rank, size } = context;
  const right = (rank + 1) % size;
  const left = (rank + size - 1) % size;
  const layout = new PieceLayout(value.length, size);
  const block = (index: number): number => (index + 2 * size) % size;
  const incoming = Array.from({ length: 2 * (size - 1) }, () => postReceive<TypedArray>(context, left));
  const sends: Promise<void>[] = [];
  // Reduce-scatter: at step s send the partial of block rank - s, receive that of block rank - s - 1.
  let partial = layout.view(value, rank, rank + 1);
  for (let step = 0; step < size - 1; step += 1) {
    sends.push(context.isend(right, partial));
    const index = block(rank - step - 1);
    partial = combineReceived(op, await incoming[step], layout.view(value, index, index + 1), true);
  }
  // Now `partial` is block rank + 1, reduced. Allgather: send block rank + 1 - s, receive block rank - s.
  const result = allocateToFill(value, value.length);
  copyInto(result, partial, layout.start(block(rank + 1)));
  for (let step = 0; step < size - 1; step += 1) {
    sends.push(context.isend(right, partial));
    partial = await incoming[size - 1 + step];
    copyInto(result, partial, layout.start(block(rank - step)));
  }
  await Promise.all(sends);
  return result;
}
