/**
 * The binomial tree rooted at `root` that CCJ uses for broadcast, reduce, scatter and gather
 * (CCJ 3.2.2-3.2.5): ranks are taken relative to the root; a node's parent clears its lowest set
 * bit, its children add each lower power of two. Node v's subtree spans relative ranks
 * [v, v + span) where span is v's lowest set bit (the whole group for the root).
 */
export interface BinomialNode {
  /** Relative rank: (rank - root) mod size. */
  readonly relative: number;
  /** Absolute rank of the parent, or -1 at the root. */
  readonly parent: number;
  /** Absolute ranks of the children, largest subtree first. */
  readonly children: readonly number[];
  /** Relative rank range [start, end) of each child's subtree, in `children` order. */
  readonly childSpans: readonly (readonly [number, number])[];
  /** End of this node's subtree (exclusive), in relative ranks. */
  readonly subtreeEnd: number;
}

export function binomialNode(rank: number, size: number, root: number): BinomialNode {
  const relative = (rank - root + size) % size;
  const absolute = (relativeRank: number) => (relativeRank + root) % size;
  let mask = 1;
  while (mask < size && (relative & mask) === 0) mask <<= 1;
  const parent = relative === 0 ? -1 : absolute(relative - mask);
  const children: number[] = [];
  const childSpans: [number, number][] = [];
  for (let childMask = mask >> 1; childMask > 0; childMask >>= 1) {
    const child = relative + childMask;
    if (child < size) {
      children.push(absolute(child));
      childSpans.push([child, Math.min(child + childMask, size)]);
    }
  }
  return { relative, parent, children, childSpans, subtreeEnd: Math.min(relative + mask, size) };
}

/** Relative rank back to absolute. */
export function absoluteRank(relative: number, size: number, root: number): number {
  return (relative + root) % size;
}
