/**
 * Recursive-doubling scan (Hillis and Steele; the log-step scan of MPICH and Open MPI): in round
 * k each rank sends its partial, the reduction of the 2^k ranks ending at itself, to the rank
 * 2^k above and puts the partial from the rank 2^k below on its left, doubling the range. All
 * receives are posted at the start. log2(size) rounds against the chain's size - 1: for many
 * members and small values. Ranges stay contiguous and lower ones go left: rank order holds.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { postReceive } from '../exchange.js';

export async function scanRecursiveDoubling<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const { rank, size } = context;
  const distances: number[] = [];
  for (let distance = 1; distance < size; distance *= 2) distances.push(distance);
  const incoming = distances.map((distance) => (rank - distance >= 0 ? postReceive<T>(context, rank - distance) : undefined));
  const sends: Promise<void>[] = [];
  let partial = value;
  for (const [round, distance] of distances.entries()) {
    if (rank + distance < size) sends.push(context.isend(rank + distance, partial));
    const received = incoming[round];
    if (received !== undefined) partial = combineReceived(op, await received, partial, true);
  }
  await Promise.all(sends);
  return partial;
}
