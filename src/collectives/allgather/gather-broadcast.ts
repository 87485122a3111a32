/** CCJ's allGather (3.2.5): gather to rank 0, then broadcast the gathered elements. */
import type { CollectiveContext } from '../context.js';
import { gatherBinomial } from '../gather/binomial.js';
import { broadcastBinomial } from '../broadcast/binomial.js';

export async function allGatherGatherBroadcast<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const gathered = await gatherBinomial(context, element, 0);
  return broadcastBinomial(context, gathered as E[], 0);
}
