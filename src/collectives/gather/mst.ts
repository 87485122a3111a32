/**
 * MST gather (Taboada et al. 2010, Fig. 10, F-MPJ, section 5.1): the mirror of the MST scatter; each half's root
 * collects its half (a contiguous slice of ranks) and sends it to the root of the enclosing range.
 * The receives from all children are posted up front. log2(size) steps, and the data crosses the
 * middle of the group only once (the MPJ papers' choice from medium sizes up).
 */
import type { CollectiveContext } from '../context.js';
import { mstNode } from '../mst-tree.js';

export async function gatherMst<E>(context: CollectiveContext, element: E, root: number): Promise<E[] | null> {
  const node = mstNode(context.rank, context.size, root);
  const fromChildren = node.children.map((child) => context.receive<E[]>(child.rank));
  // The elements of ranks [node.first, node.last], in rank order.
  const range: E[] = new Array<E>(node.last - node.first + 1);
  range[context.rank - node.first] = element;
  for (const [index, child] of node.children.entries()) {
    const elements = await fromChildren[index];
    for (let offset = 0; offset < elements.length; offset += 1) range[child.first - node.first + offset] = elements[offset];
  }
  if (node.parent < 0) return range;
  await context.send(node.parent, range);
  return null;
}
