/**
 * CCJ's broadcast (3.2.2): a binomial tree; each node forwards to all its children at once. Inner
 * nodes forward the bytes they received and decode them afterwards (one encode at the root, none
 * on the way).
 */
import type { CollectiveContext } from '../context.js';
import { binomialNode } from '../binomial-tree.js';

/** Returns `value` at the root and the received copy elsewhere. */
export async function broadcastBinomial<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const node = binomialNode(context.rank, context.size, root);
  const message = node.parent < 0 ? context.encode(value) : await context.receiveEncoded(node.parent);
  await Promise.all(node.children.map((child) => context.send(child, message)));
  return node.parent < 0 ? value : context.decode<T>(message);
}
