/**
 * nbFT scatter (the MPJ libraries' default scatter): the root starts the sends of every rank's
 * element at once and waits for them all, so they overlap. One hop and no forwarding of other
 * ranks' data: the MPJ papers' pick for small and medium messages.
 */
import type { CollectiveContext } from '../context.js';

export async function scatterFlatNonblocking<E>(context: CollectiveContext, elements: readonly E[] | null, root: number): Promise<E> {
  if (context.rank !== root) return context.receive<E>(root);
  const all = elements as readonly E[];
  const requests = [];
  for (let rank = 0; rank < context.size; rank += 1) {
    if (rank !== root) requests.push(context.isend(rank, all[rank]));
  }
  await Promise.all(requests);
  return all[root];
}
