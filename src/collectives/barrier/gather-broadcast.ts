/**
 * Gather + Bcast barrier (Taboada et al. 2010, Table 1; the MPJ papers' choice for larger groups): a binomial
 * gather of null tokens to rank 0, then a binomial broadcast of a token from rank 0. 2 log2(size)
 * steps, at most log2(size) messages per rank and phase.
 */
import type { CollectiveContext } from '../context.js';
import { gatherBinomial } from '../gather/binomial.js';
import { broadcastBinomial } from '../broadcast/binomial.js';

export async function barrierGatherBroadcast(context: CollectiveContext): Promise<void> {
  await gatherBinomial(context, null, 0);
  await broadcastBinomial(context, null, 0);
}
