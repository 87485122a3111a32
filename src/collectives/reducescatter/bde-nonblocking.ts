/**
 * nbBDE reduceScatter (Taboada et al. 2010, Table 1): recursive halving as bBDE (partners at distance 1, 2,
 * 4, ..., half the remaining partials sent each step, rank order kept: recursive-halving.ts;
 * non-powers of two folded first: power-of-two.ts), with every receive posted at the start and
 * the sends started without waiting, so no message waits unmatched and sends overlap combining.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { folding } from '../power-of-two.js';
import { postReceive } from '../exchange.js';
import { combineInto, halvingSteps } from './recursive-halving.js';

export async function reduceScatterBdeNonBlocking<E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>): Promise<E> {
  const { rank, size } = context;
  const fold = folding(rank, size);
  if (fold.folded < 0) {
    const result = postReceive<E>(context, fold.foldPartner);
    await context.send(fold.foldPartner, elements);
    return result;
  }
  const steps = halvingSteps(fold, size);
  const folded = fold.foldPartner < 0 ? undefined : postReceive<E[]>(context, fold.foldPartner);
  const incoming = steps.map((step) => postReceive<E[]>(context, step.partner));
  const sends: Promise<void>[] = [];
  const partials = [...elements];
  if (folded !== undefined) combineInto(partials, [...partials.keys()], await folded, true, op);
  for (const [index, step] of steps.entries()) {
    sends.push(context.isend(step.partner, step.give.map((given) => partials[given])));
    combineInto(partials, step.keep, await incoming[index], step.partnerIsLower, op);
  }
  if (fold.foldPartner >= 0) sends.push(context.isend(fold.foldPartner, partials[fold.foldPartner]));
  await Promise.all(sends);
  return partials[rank];
}
