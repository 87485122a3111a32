/**
 * BT allReduce (Taboada et al. 2010, Table 1, MPJ Express's large-message allreduce): a binomial tree rooted
 * at rank 0 carries the partial results up, children combined in increasing rank order (so rank
 * order holds), and the result back down the same tree. Unlike 'reduce-broadcast', which runs the
 * reduce and broadcast algorithms one after the other, every receive (children's partials and the
 * parent's result) is posted at the start, so no message waits unmatched. 2 log2(size) steps.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { binomialNode } from '../binomial-tree.js';
import { postReceive } from '../exchange.js';

export async function allReduceBinomial<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const node = binomialNode(context.rank, context.size, 0);
  // Children in increasing rank order, so that each partial covers a contiguous range.
  const partials = [...node.children].reverse().map((child) => postReceive<T>(context, child));
  const fromParent = node.parent < 0 ? undefined : postReceive<T>(context, node.parent);
  let partial = value;
  for (const received of partials) partial = combineReceived(op, await received, partial, false);
  if (node.parent >= 0) await context.send(node.parent, partial);
  const result = fromParent === undefined ? partial : await fromParent;
  await Promise.all(node.children.map((child) => context.send(child, result)));
  return result;
}
