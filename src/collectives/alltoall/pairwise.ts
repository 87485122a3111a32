/**
 * allToAll by pairwise exchange (MPICH's and Open MPI's choice for long messages): size - 1
 * rounds; in round k each member sends to rank + k and receives from rank - k (a sendrecv), so
 * every member sends and receives exactly one message per round: no hot spot, little in flight.
 */
import type { CollectiveContext } from '../context.js';
import { sendReceive } from '../exchange.js';

/** `outgoing[j]` goes to rank j; returns what each rank sent here, by rank. */
export async function allToAllPairwise<E>(context: CollectiveContext, outgoing: readonly E[]): Promise<E[]> {
  const { rank, size } = context;
  const result = new Array<E>(size);
  result[rank] = outgoing[rank];
  for (let step = 1; step < size; step += 1) {
    const to = (rank + step) % size;
    const from = (rank - step + size) % size;
    result[from] = await sendReceive<E>(context, to, outgoing[to], from);
  }
  return result;
}
