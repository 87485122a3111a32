/**
 * nb1FT gather (Taboada et al. 2010, Fig. 4): the root posts the receives from every rank up front and then
 * waits for them all, so the transfers overlap and no element arrives before its receive (no
 * buffering of unexpected messages); the ranks send with plain blocking sends.
 */
import type { CollectiveContext } from '../context.js';

export async function gatherFlatNonblocking1<E>(context: CollectiveContext, element: E, root: number): Promise<E[] | null> {
  if (context.rank !== root) {
    await context.send(root, element);
    return null;
  }
  const receives = Array.from({ length: context.size }, (_, rank) => (rank === root ? element : context.receive<E>(rank)));
  return Promise.all(receives);
}
