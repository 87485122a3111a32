/**
 * MST reduce (Taboada et al. 2010, Table 1; F-MPJ, section 5.1, MSTBcast run backwards, as F-MPJ's
 * reduce): the rank range is halved recursively; each half reduces to its own root, and the
 * root of the half without the overall root sends its result across. Every partial covers a
 * contiguous rank range and the two halves are combined lower one first, so any root keeps rank
 * order without binomial's extra hop to the root. Only the last message crosses the middle of
 * the group, which suits multi-core nodes holding consecutive ranks.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { mstNode } from '../mst-tree.js';
import { postReceive } from '../exchange.js';

export async function reduceMst<T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number): Promise<T | null> {
  const node = mstNode(context.rank, context.size, root);
  // Smallest range first: the reverse of the order in which a broadcast would send.
  const children = [...node.children].reverse();
  const received = children.map((child) => postReceive<T>(context, child.rank));
  let partial = value;
  for (const [index, child] of children.entries()) {
    const other = await received[index];
    partial = combineReceived(op, other, partial, child.first < context.rank);
  }
  if (node.parent < 0) return partial;
  await context.send(node.parent, partial);
  return null;
}
