/**
 * nbFT broadcast (Taboada et al. 2010, Fig. 2): the root starts the sends to every other rank at once and
 * then waits for them all, so they overlap; one hop, the MPJ papers' pick for small messages on few
 * members.
 */
import type { CollectiveContext } from '../context.js';

export async function broadcastFlatNonblocking<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  if (context.rank !== root) return context.receive<T>(root);
  const message = context.encode(value);
  const requests = [];
  for (let rank = 0; rank < context.size; rank += 1) {
    if (rank !== root) requests.push(context.isend(rank, message));
  }
  await Promise.all(requests);
  return value;
}
