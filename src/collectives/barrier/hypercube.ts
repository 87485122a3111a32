/**
 * BT barrier, CCJ's barrier (3.2.1): pairwise exchanges along the dimensions of a hypercube.
 * With a size that is not a power of two, the ranks beyond the largest power of two first report
 * to a partner inside it, and are released by that partner at the end.
 */
import type { CollectiveContext } from '../context.js';

export async function barrierHypercube(context: CollectiveContext): Promise<void> {
  const { rank, size } = context;
  let cube = 1;
  while (cube * 2 <= size) cube *= 2;
  if (rank >= cube) {
    await context.send(rank - cube, null);
    await context.receive(rank - cube);
    return;
  }
  if (rank + cube < size) await context.receive(rank + cube);
  for (let mask = 1; mask < cube; mask <<= 1) {
    const partner = rank ^ mask;
    await Promise.all([context.send(partner, null), context.receive(partner)]);
  }
  if (rank + cube < size) await context.send(rank + cube, null);
}
