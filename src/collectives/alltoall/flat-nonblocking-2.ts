/**
 * allToAll nb2FT (Taboada et al. 2010, Fig. 7; every entry of Taboada et al. 2010's example configuration, Table 2):
 * blocking sends and non-blocking receives, interleaved peer by peer in rank order, then the
 * receives are waited for. One send in flight at a time limits contention, while the receives
 * are already posted.
 * Each peer's receive is posted just before its send (the figure posts it just after), so a send
 * that waits for its receiver (TCP rendezvous) cannot deadlock: a send to p waits only while p is
 * still sending to a lower rank than the sender, and such waits cannot close a cycle.
 */
import type { CollectiveContext } from '../context.js';
import { byRank, otherRanks, postReceive } from '../exchange.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllFlatNonblocking2<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const peers = otherRanks(rank, size);
  const received: Promise<E>[] = [];
  for (const peer of peers) {
    received.push(postReceive<E>(context, peer));
    await context.send(peer, outgoing[peer]);
  }
  return byRank(rank, outgoing[rank], peers, await Promise.all(received));
}
