/**
 * allToAll bFT (Taboada et al. 2010, section 4.1): blocking sends and blocking receives, one peer at a time
 * in rank order. Within each pair the lower rank sends first and the higher receives first, and
 * every member walks its pairs in the same global order, so it cannot deadlock even when a send
 * waits for its receiver. The least traffic in flight at once: for networks that congest.
 */
import type { CollectiveContext } from '../context.js';
import { otherRanks } from '../exchange.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllFlatBlocking<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const result = new Array<E>(size);
  result[rank] = outgoing[rank];
  for (const peer of otherRanks(rank, size)) {
    if (rank < peer) {
      await context.send(peer, outgoing[peer]);
      result[peer] = await context.receive<E>(peer);
    } else {
      result[peer] = await context.receive<E>(peer);
      await context.send(peer, outgoing[peer]);
    }
  }
  return result;
}
