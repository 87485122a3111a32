/**
 * allGather nbBKT (Taboada et al. 2010, section 4.1, F-MPJ, Fig. 8): the ring of bBKT with all size - 1
 * receives from the left neighbour posted at start-up, so no element arrives unexpected (and gets
 * buffered); each element is forwarded to the right with a non-blocking send as soon as it
 * arrives, and the sends are waited for at the end. (F-MPJ adds a barrier after posting; here a
 * receive is posted as soon as it is called, so none is needed.)
 */
import type { CollectiveContext } from '../context.js';
import { postReceive } from '../exchange.js';

/** Returns every rank's element, by rank. */
export async function allGatherBucketNonblocking<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const { rank, size } = context;
  const left = (rank - 1 + size) % size;
  const right = (rank + 1) % size;
  // Messages from one neighbour arrive in the order sent: receive s carries step s + 1's element.
  const received = Array.from({ length: size - 1 }, () => postReceive<E>(context, left));
  const result = new Array<E>(size);
  result[rank] = element;
  const sends: Promise<void>[] = size > 1 ? [context.isend(right, element)] : [];
  for (let step = 1; step < size; step += 1) {
    const current = await received[step - 1];
    result[(rank - step + size) % size] = current;
    if (step < size - 1) sends.push(context.isend(right, current));
  }
  await Promise.all(sends);
  return result;
}
