/**
 * bBKT reduceScatter (Taboada et al. 2010, Table 1; MPICH's ring reduce-scatter): the ranks form a ring; in
 * size - 1 steps each rank passes one element's partial to its right neighbour and combines its
 * own contribution into the partial coming from the left (one blocking Sendrecv per step), so
 * element j ends at rank j. Constant message size and only neighbour links, any member count:
 * for shared memory and large elements. Element j is combined starting at rank j + 1 (rotated
 * order), so rank order does not hold.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { sendReceive } from '../exchange.js';

export async function reduceScatterBucketBlocking<E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>): Promise<E> {
  const { rank, size } = context;
  const right = (rank + 1) % size;
  const left = (rank + size - 1) % size;
  const element = (index: number): E => elements[(index + 2 * size) % size];
  // At step s send the partial of element rank - s - 1, receive that of element rank - s - 2.
  let partial = element(rank - 1);
  for (let step = 0; step < size - 1; step += 1) {
    const received = await sendReceive<E>(context, right, partial, left);
    partial = combineReceived(op, received, element(rank - step - 2), true);
  }
  return partial;
}
