/**
 * How a reduction algorithm combines what it received with what it holds. The received operand
 * is the algorithm's own (the engine decoded it into memory of its own), so a built-in reduction
 * of typed arrays writes the result over it instead of allocating one as large (reduceInto). The
 * operand it holds may be the caller's value, which no collective modifies.
 */
import { reduceInto } from '../../reduction/reductions.js';
import type { ReductionObject } from '../../reduction/reduction-object.js';

/** `op.reduce` of the two in rank order: `received` on the left when it comes from lower ranks. */
export function combineReceived<T>(op: ReductionObject<T>, received: T, held: T, receivedIsLower: boolean): T {
  return receivedIsLower ? reduceInto(op, received, held, received) : reduceInto(op, held, received, received);
}
