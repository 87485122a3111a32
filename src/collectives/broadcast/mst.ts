/**
 * MST broadcast (seed 002 Fig. 6): the group is halved recursively and each half's root sends the
 * message to the root of the other half, one blocking send per split. log2(size) steps like the
 * binomial tree, but only the first step crosses between the halves of the group, which suits
 * multi-core nodes holding consecutive ranks (the seeds' choice from medium sizes up).
 */
import type { CollectiveContext } from '../context.js';
import { mstNode } from '../mst-tree.js';

export async function broadcastMst<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const node = mstNode(context.rank, context.size, root);
  const received = node.parent < 0 ? value : await context.receive<T>(node.parent);
  for (const child of node.children) await context.send(child.rank, received);
  return received;
}
