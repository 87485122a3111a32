/**
 * bFT broadcast (Taboada et al. 2010, Fig. 1): the root sends to every other rank in turn, each send awaited
 * before the next. The simplest pattern and the fewest hops (one), for small groups or when the
 * network punishes concurrent sends from one member.
 */
import type { CollectiveContext } from '../context.js';

export async function broadcastFlatBlocking<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  if (context.rank !== root) return context.receive<T>(root);
  const message = context.encode(value);
  for (let rank = 0; rank < context.size; rank += 1) {
    if (rank !== root) await context.send(rank, message);
  }
  return value;
}
