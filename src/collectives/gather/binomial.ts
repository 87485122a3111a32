/**
 * CCJ's gather (3.2.5): the mirror of the binomial scatter; each node sends its parent the
 * elements of its whole subtree, so the root receives log2(size) messages.
 */
import type { CollectiveContext } from '../context.js';
import { binomialNode } from '../binomial-tree.js';

/** Returns every rank's element, by rank, at the root; null elsewhere. */
export async function gatherBinomial<E>(context: CollectiveContext, element: E, root: number): Promise<E[] | null> {
  const { size } = context;
  const node = binomialNode(context.rank, size, root);
  const fromChildren = await Promise.all(node.children.map((child) => context.receive<E[]>(child)));
  // Children come largest subtree first; in relative-rank order they follow this node's element.
  const subtree = [element, ...fromChildren.reverse().flat()];
  if (node.parent >= 0) {
    await context.send(node.parent, subtree);
    return null;
  }
  return Array.from({ length: size }, (_, rank) => subtree[(rank - root + size) % size]);
}
