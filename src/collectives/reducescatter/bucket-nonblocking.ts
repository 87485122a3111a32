/**
 * nbBKT reduceScatter (Taboada et al. 2010, Table 1; F-MPJ's BKT with receives posted at start-up): the ring
 * of bBKT (element j's partial travels from rank j + 1 round to rank j, each rank combining its
 * contribution into the partial from the left), but all size - 1 receives are posted at the
 * start and each step's send is started without waiting, so arriving partials are never held as
 * unexpected messages and sends overlap combining. Rotated order: rank order does not hold.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { postReceive } from '../exchange.js';

export async function reduceScatterBucketNonBlocking<E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>): Promise<E> {
  const { rank, size } = context;
  const right = (rank + 1) % size;
  const left = (rank + size - 1) % size;
  const element = (index: number): E => elements[(index + 2 * size) % size];
  const incoming = Array.from({ length: size - 1 }, () => postReceive<E>(context, left));
  const sends: Promise<void>[] = [];
  // At step s send the partial of element rank - s - 1, receive that of element rank - s - 2.
  let partial = element(rank - 1);
  for (let step = 0; step < size - 1; step += 1) {
    sends.push(context.isend(right, partial));
    partial = combineReceived(op, await incoming[step], element(rank - step - 2), true);
  }
  await Promise.all(sends);
  return partial;
}
