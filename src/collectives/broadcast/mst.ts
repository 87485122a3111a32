/**
 * MST broadcast (F-MPJ, Fig. 6): the group is halved recursively and each half's root sends the
 * message to the root of the other half, one blocking send per split. log2(size) steps like the
 * binomial tree, but only the first step crosses between the halves of the group, which suits
 * multi-core nodes holding consecutive ranks (the MPJ papers' choice from medium sizes up). Bytes are
 * forwarded as received, then decoded.
 */
import type { CollectiveContext } from '../context.js';
import { mstNode } from '../mst-tree.js';

export async function broadcastMst<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const node = mstNode(context.rank, context.size, root);
  const message = node.parent < 0 ? context.encode(value) : await context.receiveEncoded(node.parent);
  for (const child of node.children) await context.send(child.rank, message);
  return node.parent < 0 ? value : context.decode<T>(message);
}
