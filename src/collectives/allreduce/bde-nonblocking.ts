/**
 * nbBDE allReduce (Taboada et al. 2010, Table 1; F-MPJ's and MPICH's short-message allreduce): recursive
 * doubling as bBDE (partners at distance 1, 2, 4, ..., lower partial on the left, so rank order
 * holds; non-powers of two folded first, power-of-two.ts), but every receive of the call is
 * posted at the start and the sends are started without waiting, so a partner's message never
 * waits unmatched and sends overlap the combining. Also the fallback of 'rabenseifner' and 'ring'
 * for values they cannot cut into blocks.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { doublingSteps, folding } from '../power-of-two.js';
import { postReceive } from '../exchange.js';

export async function allReduceBdeNonBlocking<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const fold = folding(context.rank, context.size);
  if (fold.folded < 0) {
    const result = postReceive<T>(context, fold.foldPartner);
    await context.send(fold.foldPartner, value);
    return result;
  }
  const steps = doublingSteps(fold);
  const folded = fold.foldPartner < 0 ? undefined : postReceive<T>(context, fold.foldPartner);
  const incoming = steps.map((step) => postReceive<T>(context, step.partner));
  const sends: Promise<void>[] = [];
  let partial = folded === undefined ? value : combineReceived(op, await folded, value, true);
  for (const [index, step] of steps.entries()) {
    sends.push(context.isend(step.partner, partial));
    const other = await incoming[index];
    partial = combineReceived(op, other, partial, step.partnerIsLower);
  }
  if (fold.foldPartner >= 0) sends.push(context.isend(fold.foldPartner, partial));
  await Promise.all(sends);
  return partial;
}
