/**
 * allGather nbFT (Taboada et al. 2010, Table 1): every member posts its receives from all the others, starts
 * sending its element to all of them at once, then waits for everything. One step, size - 1
 * messages in and out per member: the lowest latency for small elements and few members.
 */
import type { CollectiveContext } from '../context.js';
import { byRank, otherRanks } from '../exchange.js';

/** Returns every rank's element, by rank. */
export async function allGatherFlatNonblocking<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const { rank, size } = context;
  const peers = otherRanks(rank, size);
  const received = peers.map((peer) => context.receive<E>(peer));
  const sends = peers.map((peer) => context.isend(peer, element));
  const [incoming] = await Promise.all([Promise.all(received), Promise.all(sends)]);
  return byRank(rank, element, peers, incoming);
}
