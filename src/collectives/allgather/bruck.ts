/**
 * allGather by Bruck's algorithm (Bruck et al. 1997; MPICH's choice for short messages on
 * non-power-of-two groups): ceil(log2 size) rounds for any size; in round k a member sends the
 * min(2^k, size - 2^k) elements it holds to rank - 2^k and receives as many from rank + 2^k.
 * Members hold elements starting from their own rank, so a final local rotation puts them in
 * rank order.
 */
import type { CollectiveContext } from '../context.js';
import { sendReceive } from '../exchange.js';

/** Returns every rank's element, by rank. */
export async function allGatherBruck<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const { rank, size } = context;
  // blocks[i] is the element of rank (rank + i) mod size.
  const blocks: E[] = [element];
  for (let distance = 1; distance < size; distance *= 2) {
    const count = Math.min(distance, size - distance);
    const incoming = await sendReceive<E[]>(context, (rank - distance + size) % size, blocks.slice(0, count), (rank + distance) % size);
    blocks.push(...incoming);
  }
  return Array.from({ length: size }, (_, source) => blocks[(source - rank + size) % size]);
}
