/**
 * nbFTGather + bFaTBcast barrier (Taboada et al. 2010, Table 1, the new MPJ library's default for small
 * groups): rank 0 gathers a null token from every rank with the nbFT gather, then releases them
 * with the four-ary tree broadcast. 1 + log4(size) steps; rank 0 handles size - 1 messages.
 */
import type { CollectiveContext } from '../context.js';
import { gatherFlatNonblocking } from '../gather/flat-nonblocking.js';
import { broadcastFourAry } from '../broadcast/four-ary.js';

export async function barrierGatherBroadcastFlatFourAry(context: CollectiveContext): Promise<void> {
  await gatherFlatNonblocking(context, null, 0);
  await broadcastFourAry(context, null, 0);
}
