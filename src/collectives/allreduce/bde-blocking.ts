/**
 * bBDE allReduce (Taboada et al. 2010, Table 1): recursive doubling, or bidirectional exchange. In log2 steps
 * each rank swaps its partial with the rank at distance 1, 2, 4, ... (one blocking Sendrecv per
 * step) and combines, the lower ranks' partial on the left, so rank order holds. A size that is
 * not a power of two is folded first (power-of-two.ts). Few, whole-value messages: the choice for
 * small values on high-latency networks.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { doublingSteps, folding } from '../power-of-two.js';
import { sendReceive } from '../exchange.js';

export async function allReduceBdeBlocking<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const fold = folding(context.rank, context.size);
  if (fold.folded < 0) {
    await context.send(fold.foldPartner, value);
    return context.receive<T>(fold.foldPartner);
  }
  let partial = fold.foldPartner < 0 ? value : combineReceived(op, await context.receive<T>(fold.foldPartner), value, true);
  for (const step of doublingSteps(fold)) {
    const other = await sendReceive<T>(context, step.partner, partial, step.partner);
    partial = combineReceived(op, other, partial, step.partnerIsLower);
  }
  if (fold.foldPartner >= 0) await context.send(fold.foldPartner, partial);
  return partial;
}
