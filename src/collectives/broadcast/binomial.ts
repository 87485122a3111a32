/** CCJ's broadcast (3.2.2): a binomial tree; each node forwards to all its children at once. */
import type { CollectiveContext } from '../context.js';
import { binomialNode } from '../binomial-tree.js';

/** Returns `value` at the root and the received copy elsewhere. */
export async function broadcastBinomial<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const node = binomialNode(context.rank, context.size, root);
  const received = node.parent < 0 ? value : await context.receive<T>(node.parent);
  await Promise.all(node.children.map((child) => context.send(child, received)));
  return received;
}
