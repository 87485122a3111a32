/**
 * nbFT gather (Taboada et al. 2010, Fig. 3; MPJ Express's gather): non-blocking sends at the ranks (started
 * and then waited for), blocking receives in rank order at the root. The paper notes the
 * non-blocking send overlaps nothing; in ccjs `send` is already an isend plus its wait, so this
 * behaves like bFT. It is kept to match Table 1 of Taboada et al. 2010; nb1FT (flat-nonblocking-1) is the
 * flat gather that overlaps.
 */
import type { CollectiveContext } from '../context.js';

export async function gatherFlatNonblocking<E>(context: CollectiveContext, element: E, root: number): Promise<E[] | null> {
  if (context.rank !== root) {
    await context.isend(root, element);
    return null;
  }
  const result: E[] = [];
  for (let rank = 0; rank < context.size; rank += 1) result.push(rank === root ? element : await context.receive<E>(rank));
  return result;
}
