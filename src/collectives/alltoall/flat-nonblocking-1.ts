/**
 * allToAll nb1FT (seed 000 Fig. 6): a non-blocking send and a non-blocking receive per peer, all
 * started in one pass; then the sends are waited for, then the receives. The most overlap, at the
 * price of every message in flight at once (contention on some networks, says the seed).
 */
import type { CollectiveContext } from '../context.js';
import { byRank, otherRanks, postReceive } from '../exchange.js';
import { waitAll } from '../../../transport/request.js';
import type { Request } from '../../../transport/request.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllFlatNonblocking1<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const peers = otherRanks(rank, size);
  const sends: Request<void>[] = [];
  const received: Promise<E>[] = [];
  for (const peer of peers) {
    sends.push(context.isend(peer, outgoing[peer]));
    received.push(postReceive<E>(context, peer));
  }
  await waitAll(sends);
  return byRank(rank, outgoing[rank], peers, await Promise.all(received));
}
