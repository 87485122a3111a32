/**
 * Rabenseifner's allReduce (MPICH's and Open MPI's long-message allreduce): a reduce-scatter by
 * recursive halving (partners at distance 1, 2, 4, ...; each step sends half of the block it
 * holds and combines the half it keeps, the lower partner's data on the left) followed by an
 * allgather by recursive doubling in the reverse order. Each rank sends and receives about twice
 * the value in all, against log2(size) times for recursive doubling: the choice for large typed
 * arrays. Non-powers of two are folded first (power-of-two.ts); values that cannot be cut into
 * blocks (blockwise.ts) go to 'bde-nonblocking'. Rank order holds for both paths.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import type { TypedArray } from '../../../reduction/reductions.js';
import { doublingSteps, folding } from '../power-of-two.js';
import { postReceive, sendReceive } from '../exchange.js';
import { allocateToFill, copyInto } from '../typed-array-pieces.js';
import { blockwise } from './blockwise.js';
import { allReduceBdeNonBlocking } from './bde-nonblocking.js';

export async function allReduceRabenseifner<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const blocks = blockwise(value, op);
  if (blocks === undefined) return allReduceBdeNonBlocking(context, value, op);
  return (await halveThenDouble(context, blocks.array, blocks.op)) as unknown as T;
}

async function halveThenDouble(context: CollectiveContext, value: TypedArray, op: ReductionObject<TypedArray>): Promise<TypedArray> {
  const fold = folding(context.rank, context.size);
  if (fold.folded < 0) {
    const result = postReceive<TypedArray>(context, fold.foldPartner);
    await context.send(fold.foldPartner, value);
    return result;
  }
  const whole = fold.foldPartner < 0 ? value : combineReceived(op, await context.receive<TypedArray>(fold.foldPartner), value, true);
  const steps = doublingSteps(fold);
  // Reduce-scatter: `held` is the reduction, over the ranks seen so far, of elements [start, end).
  const ranges: (readonly [number, number])[] = [];
  let start = 0;
  let end = whole.length;
  let held = whole;
  for (const step of steps) {
    ranges.push([start, end]);
    const middle = start + Math.floor((end - start) / 2);
    const [keepStart, keepEnd, giveStart, giveEnd] = step.partnerIsLower ? [middle, end, start, middle] : [start, middle, middle, end];
    const given = held.subarray(giveStart - start, giveEnd - start);
    const other = await sendReceive<TypedArray>(context, step.partner, given, step.partner);
    const kept = held.subarray(keepStart - start, keepEnd - start);
    held = combineReceived(op, other, kept, step.partnerIsLower);
    [start, end] = [keepStart, keepEnd];
  }
  // Allgather: undo the steps, swapping the reduced part held for the partner's.
  const result = allocateToFill(whole, whole.length);
  copyInto(result, held, start);
  for (let index = steps.length - 1; index >= 0; index -= 1) {
    const step = steps[index];
    const [rangeStart, rangeEnd] = ranges[index];
    const other = await sendReceive<TypedArray>(context, step.partner, result.subarray(start, end), step.partner);
    copyInto(result, other, step.partnerIsLower ? rangeStart : end);
    [start, end] = [rangeStart, rangeEnd];
  }
  if (fold.foldPartner >= 0) await context.send(fold.foldPartner, result);
  return result;
}
