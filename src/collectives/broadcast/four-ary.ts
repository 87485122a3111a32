/**
 * bFaT broadcast (Taboada et al. 2010, Fig. 8; MPJ Express's broadcast): a four-ary tree over the ranks
 * relative to the root, relative rank v sending to 4v+1 .. 4v+4 in turn with blocking sends.
 * Fewer levels than a binomial tree (log4 of the size) with at most four sends per member. Bytes
 * are forwarded as received, then decoded.
 */
import type { CollectiveContext } from '../context.js';
import { absoluteRank } from '../binomial-tree.js';

const ARITY = 4;

export async function broadcastFourAry<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const { rank, size } = context;
  const relative = (rank - root + size) % size;
  const message = relative === 0 ? context.encode(value) : await context.receiveEncoded(absoluteRank(Math.floor((relative - 1) / ARITY), size, root));
  for (let child = ARITY * relative + 1; child <= ARITY * relative + ARITY && child < size; child += 1) {
    await context.send(absoluteRank(child, size, root), message);
  }
  return relative === 0 ? value : context.decode<T>(message);
}
