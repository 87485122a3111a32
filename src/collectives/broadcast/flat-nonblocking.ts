/**
 * nbFT broadcast (seed 000 Fig. 2): the root starts the sends to every other rank at once and
 * then waits for them all, so they overlap; one hop, the seeds' pick for small messages on few
 * members.
 */
import type { CollectiveContext } from '../context.js';

export async function broadcastFlatNonblocking<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  if (context.rank !== root) return context.receive<T>(root);
  const requests = [];
  for (let rank = 0; rank < context.size; rank += 1) {
    if (rank !== root) requests.push(context.isend(rank, value));
  }
  await Promise.all(requests);
  return value;
}
