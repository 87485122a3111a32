/**
 * nbFT reduce (Taboada et al. 2010, Table 1): like bFT, but the root posts every receive up front, so the
 * values arrive (and are copied in) while it is still combining earlier ones; it awaits them in
 * rank order, which keeps non-commutative operations in order. Pick it over bFT when the root
 * would otherwise leave senders' messages waiting unmatched.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { postReceive } from '../exchange.js';

export async function reduceFlatNonBlocking<T>(context: CollectiveContext, value: T, op: ReductionObject<T>, root: number): Promise<T | null> {
  const { rank, size } = context;
  if (rank !== root) {
    await context.send(root, value);
    return null;
  }
  const operands = Array.from({ length: size }, (_, source) => (source === root ? Promise.resolve(value) : postReceive<T>(context, source)));
  let result: T = await operands[0];
  for (let source = 1; source < size; source += 1) result = source === root ? combineReceived(op, result, value, true) : combineReceived(op, await operands[source], result, false);
  return result;
}
