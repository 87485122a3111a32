/**
 * bFT gather: every rank sends its element to the root, which receives them one by one in rank
 * order, posting each receive only after the previous one completed (over TCP a large element
 * then waits at its sender until the root asks for it, so the root is never flooded).
 */
import type { CollectiveContext } from '../context.js';

export async function gatherFlatBlocking<E>(context: CollectiveContext, element: E, root: number): Promise<E[] | null> {
  if (context.rank !== root) {
    await context.send(root, element);
    return null;
  }
  const result: E[] = [];
  for (let rank = 0; rank < context.size; rank += 1) result.push(rank === root ? element : await context.receive<E>(rank));
  return result;
}
