/**
 * bFaT broadcast (seed 000 Fig. 8; MPJ Express's broadcast): a four-ary tree over the ranks
 * relative to the root, relative rank v sending to 4v+1 .. 4v+4 in turn with blocking sends.
 * Fewer levels than a binomial tree (log4 of the size) with at most four sends per member.
 */
import type { CollectiveContext } from '../context.js';
import { absoluteRank } from '../binomial-tree.js';

const ARITY = 4;

export async function broadcastFourAry<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const { rank, size } = context;
  const relative = (rank - root + size) % size;
  const received = relative === 0 ? value : await context.receive<T>(absoluteRank(Math.floor((relative - 1) / ARITY), size, root));
  for (let child = ARITY * relative + 1; child <= ARITY * relative + ARITY && child < size; child += 1) {
    await context.send(absoluteRank(child, size, root), received);
  }
  return received;
}
