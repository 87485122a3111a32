/** allToAll as a flat exchange: every member posts all its sends and receives at once. */
import type { CollectiveContext } from '../context.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllFlat<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const peers = [...Array(size).keys()].filter((peer) => peer !== rank);
  const received = peers.map((peer) => context.receive<E>(peer));
  await Promise.all(peers.map((peer) => context.send(peer, outgoing[peer])));
  const incoming = await Promise.all(received);
  const result: E[] = new Array(size);
  peers.forEach((peer, index) => (result[peer] = incoming[index]));
  result[rank] = outgoing[rank];
  return result;
}
