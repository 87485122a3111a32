/**
 * allGather bBKT (Taboada et al. 2010, Fig. 12, F-MPJ, Fig. 8-9): the members form a ring; in each of
 * size - 1 steps every member sends its right neighbour the element it got from its left one in
 * the step before (its own first). Constant message size and only neighbour traffic, so it suits
 * large elements; each step waits for its exchange (a sendrecv) before the next.
 */
import type { CollectiveContext } from '../context.js';
import { sendReceive } from '../exchange.js';

/** Returns every rank's element, by rank. */
export async function allGatherBucketBlocking<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const { rank, size } = context;
  const left = (rank - 1 + size) % size;
  const right = (rank + 1) % size;
  const result = new Array<E>(size);
  result[rank] = element;
  let current = element;
  for (let step = 1; step < size; step += 1) {
    current = await sendReceive<E>(context, right, current, left);
    result[(rank - step + size) % size] = current;
  }
  return result;
}
