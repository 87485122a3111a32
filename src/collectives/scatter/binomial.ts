/**
 * CCJ's scatter (3.2.4): the root sends each child the elements of that child's whole subtree;
 * every node keeps its own element and forwards the sub-ranges to its children.
 */
import type { CollectiveContext } from '../context.js';
import { binomialNode } from '../binomial-tree.js';

/** `elements` (the root's, by rank) is ignored elsewhere; returns this rank's element. */
export async function scatterBinomial<E>(context: CollectiveContext, elements: readonly E[] | null, root: number): Promise<E> {
  const { size } = context;
  const node = binomialNode(context.rank, size, root);
  // Elements of this node's subtree, by relative rank starting at this node.
  let subtree: E[];
  if (node.parent < 0) {
    const all = elements as readonly E[];
    subtree = Array.from({ length: size }, (_, relative) => all[(relative + root) % size]);
  } else {
    subtree = await context.receive<E[]>(node.parent);
  }
  await Promise.all(node.children.map((child, index) => {
    const [start, end] = node.childSpans[index];
    return context.send(child, subtree.slice(start - node.relative, end - node.relative));
  }));
  return subtree[0];
}
