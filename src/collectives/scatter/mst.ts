/**
 * MST scatter (F-MPJ, section 5.1): the minimum-spanning tree of the MST broadcast, each root sending
 * the root of the other half that half's elements (one contiguous slice of ranks), one blocking
 * send per split. log2(size) steps, and the elements cross the middle of the group only once.
 */
import type { CollectiveContext } from '../context.js';
import { mstNode } from '../mst-tree.js';

export async function scatterMst<E>(context: CollectiveContext, elements: readonly E[] | null, root: number): Promise<E> {
  const node = mstNode(context.rank, context.size, root);
  // The elements of ranks [node.first, node.last].
  const range = node.parent < 0 ? (elements as readonly E[]) : await context.receive<E[]>(node.parent);
  for (const child of node.children) await context.send(child.rank, range.slice(child.first - node.first, child.last - node.first + 1));
  return range[context.rank - node.first];
}
