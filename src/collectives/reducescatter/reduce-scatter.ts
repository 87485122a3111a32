/**
 * reduceScatter composed as the MPJ papers do (Reduce+Scatter): every member's elements are reduced
 * element by element to rank 0 (in rank order), which scatters element r to rank r.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { reduceBinomial } from '../reduce/binomial.js';
import { scatterBinomial } from '../scatter/binomial.js';

export async function reduceScatterReduceScatter<E>(context: CollectiveContext, elements: readonly E[], op: ReductionObject<E>): Promise<E> {
  const elementwise: ReductionObject<readonly E[]> = {
    reduce: (a, b) => a.map((element, index) => op.reduce(element, b[index])),
    commutative: op.commutative,
  };
  const reduced = await reduceBinomial(context, elements, elementwise, 0);
  return scatterBinomial(context, reduced, 0);
}
