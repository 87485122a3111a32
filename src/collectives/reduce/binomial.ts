/**
 * CCJ's reduce (3.2.3): a binomial tree in which each node combines its own value with its
 * children's partial results. Rooted at rank 0 the tree combines in rank order (a node's value
 * covers ranks [v, v + 2^k), the child's the next 2^k), so a non-commutative operation reduces
 * towards rank 0 and the result then moves to the root.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { binomialNode } from '../binomial-tree.js';

export async function reduceBinomial<T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number): Promise<T | null> {
  const inOrder = op.commutative === false;
  const treeRoot = inOrder ? 0 : root;
  const node = binomialNode(context.rank, context.size, treeRoot);
  let partial = value;
  // Children in increasing rank order, so that each result covers a contiguous range.
  const children = [...node.children].reverse();
  const received = children.map((child) => context.receive<T>(child));
  for (const result of received) partial = combineReceived(op, await result, partial, false);
  if (node.parent >= 0) {
    await context.send(node.parent, partial);
    return context.rank === root ? context.receive<T>(treeRoot) : null;
  }
  if (treeRoot !== root) {
    await context.send(root, partial);
    return null;
  }
  return partial;
}
