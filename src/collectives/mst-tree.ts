/**
 * The minimum-spanning tree (MST) of the MPJ collectives of Taboada et al. (F-MPJ, Fig. 6, after Barnett
 * and van de Geijn): the range of ranks [left, right] is halved at mid = floor((left + right) / 2);
 * the range's root sends to `right` when it is in the lower half, to `left` otherwise, and that
 * rank becomes the root of the other half; both halves recurse. Ranges stay contiguous in
 * absolute ranks, so a subtree's scatter or gather data is one slice in rank order, and only the
 * first split crosses the middle of the group (the fewest transfers between distant processes
 * when ranks are placed in blocks per node).
 */
export interface MstChild {
  readonly rank: number;
  /** Absolute rank range [first, last] that the child becomes the root of. */
  readonly first: number;
  readonly last: number;
}

export interface MstNode {
  /** Absolute rank this node gets the data from (broadcast, scatter), or -1 at the root. */
  readonly parent: number;
  /** Absolute rank range [first, last] this node is the root of (the whole group at the root). */
  readonly first: number;
  readonly last: number;
  /** Children in the order of the splits (largest range first); their ranges and this rank partition [first, last]. */
  readonly children: readonly MstChild[];
}

export function mstNode(rank: number, size: number, root: number): MstNode {
  let left = 0;
  let right = size - 1;
  // The root of the range [left, right] that holds `rank`.
  let current = root;
  let parent = -1;
  let first = 0;
  let last = size - 1;
  const children: MstChild[] = [];
  while (left < right) {
    const mid = Math.floor((left + right) / 2);
    const rootBelow = current <= mid;
    const destination = rootBelow ? right : left;
    const other: [number, number] = rootBelow ? [mid + 1, right] : [left, mid];
    if (rank === current) children.push({ rank: destination, first: other[0], last: other[1] });
    if (rank === destination) {
      parent = current;
      [first, last] = other;
    }
    const rankBelow = rank <= mid;
    if (rankBelow !== rootBelow) current = destination;
    if (rankBelow) right = mid;
    else left = mid + 1;
  }
  return { parent, first, last, children };
}
