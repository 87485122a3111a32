/**
 * The plan of reduceScatter's recursive halving (bde-blocking, bde-nonblocking) on the folded
 * ranks of power-of-two.ts: element j goes to rank j, so it belongs to the folded rank that stands
 * for j. At the step with distance `mask` a folded rank keeps the elements whose owner agrees
 * with it in bit `mask` and gives the partner the others: after the last step it holds just its
 * own. Distances grow (1, 2, 4, ...), so the partials of an element always cover a contiguous
 * range of ranks and the lower one goes on the left: rank order holds.
 */
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { doublingSteps, foldedOwner } from '../power-of-two.js';
import type { DoublingStep, Folding } from '../power-of-two.js';

export interface HalvingStep extends DoublingStep {
  /** Indices of the elements this rank keeps and combines, in increasing order. */
  readonly keep: readonly number[];
  /** Indices of the elements it sends to the partner (the partner's `keep`), in increasing order. */
  readonly give: readonly number[];
}

export function halvingSteps(fold: Folding, size: number): HalvingStep[] {
  let held = [...Array(size).keys()];
  return doublingSteps(fold).map((step) => {
    const mine = (index: number) => (foldedOwner(index, fold.remainder) & step.mask) === (fold.folded & step.mask);
    const keep = held.filter(mine);
    const give = held.filter((index) => !mine(index));
    held = keep;
    return { ...step, keep, give };
  });
}

/** Combines `other[k]` into `partials[indices[k]]`, `other` on the left if it covers lower ranks. */
export function combineInto<E>(partials: E[], indices: readonly number[], other: readonly E[], otherIsLower: boolean, op: ReductionObject<E>): void {
  indices.forEach((index, k) => {
    partials[index] = combineReceived(op, other[k] as E, partials[index] as E, otherIsLower);
  });
}
