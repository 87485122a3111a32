/**
 * Point-to-point patterns shared by the data-movement collectives (allGather, allToAll): the
 * peers of a flat exchange, a receive posted ahead of its use, and MPI_Sendrecv.
 */
import type { CollectiveContext } from './context.js';

/** Every rank of the group but `rank`, in rank order. */
export function otherRanks(rank: number, size: number): number[] {
  return [...Array(size).keys()].filter((peer) => peer !== rank);
}

/** MPI_Irecv: posts the receive from `source` now, for the caller to await later (see CollectiveContext.postReceive). */
export function postReceive<T>(context: CollectiveContext, source: number): Promise<T> {
  return context.postReceive<T>(source);
}

/**
 * MPI_Sendrecv: posts the receive from `source` first, then sends `value` to `destination`, and
 * waits for both. Posting first lets every member of a ring or a pairwise round send at once
 * without deadlock, even when large sends wait for their receiver (TCP rendezvous).
 */
export function sendReceive<T>(context: CollectiveContext, destination: number, value: unknown, source: number): Promise<T> {
  return context.sendReceive<T>(destination, value, source);
}

/** The result of a flat exchange, by rank: `own` at `rank`, `incoming[i]` at `peers[i]`. */
export function byRank<E>(rank: number, own: E, peers: readonly number[], incoming: readonly E[]): E[] {
  const result = new Array<E>(peers.length + 1);
  result[rank] = own;
  peers.forEach((peer, index) => (result[peer] = incoming[index]));
  return result;
}
