/**
 * allToAll nb1FT (Taboada et al. 2010, Fig. 6): a non-blocking send and a non-blocking receive per peer, all
 * started in one pass; then the sends are waited for, then the receives. The most overlap, at the
 * price of every message in flight at once (contention on some networks, says the paper).
 */
import type { CollectiveContext } from '../context.js';
import { byRank, otherRanks, postReceive } from '../exchange.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllFlatNonblocking1<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const peers = otherRanks(rank, size);
  const sends: Promise<void>[] = [];
  const received: Promise<E>[] = [];
  for (const peer of peers) {
    sends.push(context.isend(peer, outgoing[peer]));
    received.push(postReceive<E>(context, peer));
  }
  await Promise.all(sends);
  return byRank(rank, outgoing[rank], peers, await Promise.all(received));
}
