/**
 * allToAll nbFT (Taboada et al. 2010, Fig. 5; MPJ Express's and F-MPJ's allToAll): non-blocking sends to every
 * peer at once, then blocking receives one peer at a time in rank order, then the sends are
 * waited for. Sends overlap; receives are posted only as they are needed.
 */
import type { CollectiveContext } from '../context.js';
import { otherRanks } from '../exchange.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllFlatNonblocking<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const peers = otherRanks(rank, size);
  const sends = peers.map((peer) => context.isend(peer, outgoing[peer]));
  const result = new Array<E>(size);
  result[rank] = outgoing[rank];
  for (const peer of peers) result[peer] = await context.receive<E>(peer);
  await Promise.all(sends);
  return result;
}
