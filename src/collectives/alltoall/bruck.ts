/**
 * allToAll by Bruck's index algorithm (Bruck et al. 1997; MPICH's choice for short messages):
 * ceil(log2 size) rounds for any size instead of size - 1, each element travelling up to log2
 * size hops. Blocks are first rotated so that block i is the one for rank + i; in round k every
 * member sends the blocks whose index has bit k set to rank + 2^k and receives the same indices
 * from rank - 2^k; block i at rank r then comes from rank r - i, and a final rotation orders the
 * result by source.
 */
import type { CollectiveContext } from '../context.js';
import { sendReceive } from '../exchange.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllBruck<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const blocks = Array.from({ length: size }, (_, index) => outgoing[(rank + index) % size]);
  for (let distance = 1; distance < size; distance *= 2) {
    const indices = [...blocks.keys()].filter((index) => (index & distance) !== 0);
    const incoming = await sendReceive<E[]>(context, (rank + distance) % size, indices.map((index) => blocks[index]), (rank - distance + size) % size);
    indices.forEach((index, position) => (blocks[index] = incoming[position]));
  }
  return Array.from({ length: size }, (_, source) => blocks[(rank - source + size) % size]);
}
