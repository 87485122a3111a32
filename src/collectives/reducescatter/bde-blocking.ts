/**
 * bBDE reduceScatter (Taboada et al. 2010, Table 1): recursive halving. In log2 steps each rank sends the
 * partner at distance 1, 2, 4, ... the partials of the elements destined for the partner's side
 * and combines the ones it keeps (one blocking Sendrecv per step), halving the data each time;
 * rank order holds (recursive-halving.ts). Non-powers of two are folded first (power-of-two.ts).
 * log2(size) steps and about one vector sent per rank: for high-latency networks.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { folding } from '../power-of-two.js';
import { sendReceive } from '../exchange.js';
import { combineInto, halvingSteps } from './recursive-halving.js';

export async function reduceScatterBdeBlocking<E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>): Promise<E> {
  const { rank, size } = context;
  const fold = folding(rank, size);
  if (fold.folded < 0) {
    await context.send(fold.foldPartner, elements);
    return context.receive<E>(fold.foldPartner);
  }
  const partials = [...elements];
  const all = [...partials.keys()];
  if (fold.foldPartner >= 0) combineInto(partials, all, await context.receive<E[]>(fold.foldPartner), true, op);
  for (const step of halvingSteps(fold, size)) {
    const other = await sendReceive<E[]>(context, step.partner, step.give.map((index) => partials[index]), step.partner);
    combineInto(partials, step.keep, other, step.partnerIsLower, op);
  }
  if (fold.foldPartner >= 0) await context.send(fold.foldPartner, partials[fold.foldPartner]);
  return partials[rank];
}
