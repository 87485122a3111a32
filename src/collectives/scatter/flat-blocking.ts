/**
 * bFT scatter: the root sends each rank its element in turn, each send awaited before the next
 * (over TCP a large element waits for its receiver, so receivers are served one by one).
 */
import type { CollectiveContext } from '../context.js';

export async function scatterFlatBlocking<E>(context: CollectiveContext, elements: readonly E[] | null, root: number): Promise<E> {
  if (context.rank !== root) return context.receive<E>(root);
  const all = elements as readonly E[];
  for (let rank = 0; rank < context.size; rank += 1) {
    if (rank !== root) await context.send(rank, all[rank]);
  }
  return all[root];
}
