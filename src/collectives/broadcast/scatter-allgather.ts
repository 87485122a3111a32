/**
 * Scatter-allgather broadcast (van de Geijn; MPICH's long-message broadcast, F-MPJ's
 * "MSTScatter+BKTAllgather"): the typed array is cut into one block per rank, a binomial scatter
 * gives each rank its block, then a ring allgather circulates the blocks. Each rank moves about
 * 2x the array instead of log2(size)x, so it wins for large arrays on many members. Any other value
 * falls back to a binomial broadcast of the whole value.
 */
import type { CollectiveContext } from '../context.js';
import { absoluteRank, binomialNode } from '../binomial-tree.js';
import { PieceLayout, allocateToFill, copyInto, headerFor, type PiecesHeader } from '../typed-array-pieces.js';
import type { TypedArray } from '../../../reduction/reductions.js';

export async function broadcastScatterAllgather<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const { size } = context;
  if (size === 1) return value;
  const node = binomialNode(context.rank, size, root);
  const { relative } = node;
  const header = node.parent < 0 ? headerFor(value, () => size) : await context.receive<PiecesHeader<T>>(node.parent);
  if (header.kind === 'whole') {
    await Promise.all(node.children.map((child) => context.send(child, header)));
    return header.value;
  }
  // Block j belongs to relative rank j. Scatter: each child gets its subtree's blocks as one view.
  const layout = new PieceLayout(header.length, size);
  const subtree = node.parent < 0 ? (value as TypedArray) : await context.receive<TypedArray>(node.parent);
  await Promise.all(node.children.map(async (child, index) => {
    const [first, end] = node.childSpans[index];
    await context.send(child, header);
    await context.send(child, layout.view(subtree, first, end, relative));
  }));
  // Ring allgather over relative ranks: step i passes block (relative - i) to the right. The root
  // already has every block and the last rank's right neighbour is the root, so neither does
  // that part.
  const left = absoluteRank(relative - 1 + size, size, root);
  const right = absoluteRank(relative + 1, size, root);
  const block = (step: number) => (relative - step + size) % size;
  if (relative === 0) {
    await Promise.all(Array.from({ length: size - 1 }, (_, step) => context.send(right, layout.view(subtree, block(step), block(step) + 1))));
    return value;
  }
  const receives = Array.from({ length: size - 1 }, () => context.receive<TypedArray>(left));
  const own = layout.view(subtree, relative, relative + 1, relative);
  const result = allocateToFill(own, layout.length);
  copyInto(result, own, layout.start(relative));
  const sends: Promise<void>[] = [];
  if (relative < size - 1) sends.push(context.send(right, own));
  for (let step = 1; step < size; step += 1) {
    const piece = await receives[step - 1];
    copyInto(result, piece, layout.start(block(step)));
    if (relative < size - 1 && step < size - 1) sends.push(context.send(right, piece));
  }
  await Promise.all(sends);
  return result as T;
}
