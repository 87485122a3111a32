/**
 * bFT reduce (Taboada et al. 2010, Table 1; MPJ Express's reduce): every rank sends its value straight to
 * the root, which receives them one at a time in rank order and combines as it goes. The fewest
 * messages and no forwarding, so it suits few members or tiny values; the root's serial receives
 * make it the least scalable.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';

export async function reduceFlatBlocking<T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number): Promise<T | null> {
  const { rank, size } = context;
  if (rank !== root) {
    await context.send(root, value);
    return null;
  }
  let result = rank === 0 ? value : await context.receive<T>(0);
  for (let source = 1; source < size; source += 1) {
    result = source === root ? combineReceived(op, result, value, true) : combineReceived(op, await context.receive<T>(source), result, false);
  }
  return result;
}
