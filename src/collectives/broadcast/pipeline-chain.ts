/**
 * Pipelined chain broadcast (MPICH/Open MPI "pipeline"/"chain" for large messages): ranks form a
 * chain from the root in relative-rank order and a typed array travels in segments of about
 * PIPELINE_SEGMENT_BYTES, each rank forwarding segment s to the next while segment s+1 arrives.
 * For large arrays the time approaches one array transfer plus (size - 1) segment transfers,
 * whatever the member count. Any other value travels whole along the chain.
 */
import type { CollectiveContext } from '../context.js';
import { absoluteRank } from '../binomial-tree.js';
import { PieceLayout, allocateToFill, copyInto, headerFor, type PiecesHeader } from '../typed-array-pieces.js';
import type { TypedArray } from '../../../reduction/reductions.js';

/** Segment size in bytes: large enough to amortize per-message costs, small enough to pipeline. */
export const PIPELINE_SEGMENT_BYTES = 64 * 1024;

export async function broadcastPipelineChain<T>(context: CollectiveContext, value: T, root: number): Promise<T> {
  const { rank, size } = context;
  if (size === 1) return value;
  const relative = (rank - root + size) % size;
  const previous = absoluteRank(relative - 1 + size, size, root);
  const next = relative + 1 < size ? absoluteRank(relative + 1, size, root) : -1;
  const header = relative === 0 ? headerFor(value, (array) => Math.max(1, Math.ceil(array.byteLength / PIPELINE_SEGMENT_BYTES))) : await context.receive<PiecesHeader<T>>(previous);
  const sends: Promise<void>[] = next < 0 ? [] : [context.send(next, header)];
  if (header.kind === 'whole') {
    await Promise.all(sends);
    return header.value;
  }
  const layout = new PieceLayout(header.length, header.pieces);
  if (relative === 0) {
    const array = value as TypedArray;
    for (let segment = 0; segment < layout.count; segment += 1) sends.push(context.send(next, layout.view(array, segment, segment + 1)));
    await Promise.all(sends);
    return value;
  }
  // Every segment's receive is posted now, so segments never wait as unexpected messages.
  const receives = Array.from({ length: layout.count }, () => context.receive<TypedArray>(previous));
  let result: TypedArray | undefined;
  for (let segment = 0; segment < layout.count; segment += 1) {
    const piece = await receives[segment];
    result ??= allocateToFill(piece, layout.length);
    copyInto(result, piece, layout.start(segment));
    if (next >= 0) sends.push(context.send(next, piece));
  }
  await Promise.all(sends);
  return result as T;
}
