/**
 * Recursive doubling and halving on any member count, by MPICH's remainder folding: with `pof2`
 * the largest power of two not above the size and `remainder` = size - pof2, each even rank below
 * 2 * remainder first hands its data to the next (odd) rank and sits out; the other ranks get the
 * "folded ranks" 0..pof2-1, in rank order. Folded rank i stands for ranks 2i and 2i+1 when
 * i < remainder, else for rank i + remainder: contiguous rank ranges, so combining a lower folded
 * rank's data on the left keeps rank order. At the end each rank that sat out gets its result
 * from the partner that held its data.
 */

export interface Folding {
  /** The largest power of two not above the size: the number of folded ranks. */
  readonly pof2: number;
  /** size - pof2: the number of ranks that sit out. */
  readonly remainder: number;
  /** This rank's folded rank, or -1 if it sits out. */
  readonly folded: number;
  /**
   * The rank it pairs with while folding: rank + 1 for a rank that sits out, rank - 1 for the
   * rank that takes its data, -1 for a rank that does not fold.
   */
  readonly foldPartner: number;
}

export function folding(rank: number, size: number): Folding {
  let pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  const remainder = size - pof2;
  if (rank >= 2 * remainder) return { pof2, remainder, folded: rank - remainder, foldPartner: -1 };
  return rank % 2 === 0 ? { pof2, remainder, folded: -1, foldPartner: rank + 1 } : { pof2, remainder, folded: rank >> 1, foldPartner: rank - 1 };
}

/** The rank that acts for folded rank `folded`. */
export function activeRank(folded: number, remainder: number): number {
  return folded < remainder ? 2 * folded + 1 : folded + remainder;
}

/** The folded rank that stands for `rank` (whether it acts or sat out). */
export function foldedOwner(rank: number, remainder: number): number {
  return rank < 2 * remainder ? rank >> 1 : rank - remainder;
}

export interface DoublingStep {
  /** The distance in folded ranks: 1, 2, 4, ... */
  readonly mask: number;
  /** The partner's (absolute) rank. */
  readonly partner: number;
  /** The partner's data covers lower ranks than this rank's, so it goes on the left. */
  readonly partnerIsLower: boolean;
}

/**
 * The exchanges of a folded rank, nearest partner first: before the step with distance `mask`
 * a folded rank's data covers the folded ranks that agree with it above the lowest log2(mask)
 * bits, a contiguous range, and the partner's is the adjacent range of the same length.
 */
export function doublingSteps(fold: Folding): DoublingStep[] {
  const steps: DoublingStep[] = [];
  if (fold.folded < 0) return steps;
  for (let mask = 1; mask < fold.pof2; mask <<= 1) {
    const partnerFolded = fold.folded ^ mask;
    steps.push({ mask, partner: activeRank(partnerFolded, fold.remainder), partnerIsLower: partnerFolded < fold.folded });
  }
  return steps;
}
