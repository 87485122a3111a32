/**
 * nbFT allReduce (Taboada et al. 2010, Table 1, MPJ Express's small-message allreduce): every rank posts a
 * receive from every other rank, sends its value to all of them at once, and combines the values
 * in rank order as they are awaited in order (so non-commutative operations stay in order). One
 * round of latency but size - 1 messages per rank: for few members and small values.
 */
import type { CollectiveContext } from '../context.js';
import type { ReductionObject } from '../../../reduction/reduction-object.js';
import { combineReceived } from '../combine.js';
import { otherRanks, postReceive } from '../exchange.js';

export async function allReduceFlatNonBlocking<T>(context: CollectiveContext, value: T, op: ReductionObject<T>): Promise<T> {
  const { rank, size } = context;
  const operands = Array.from({ length: size }, (_, peer) => (peer === rank ? Promise.resolve(value) : postReceive<T>(context, peer)));
  const sends = otherRanks(rank, size).map((peer) => context.isend(peer, value));
  let result: T = await operands[0];
  for (let peer = 1; peer < size; peer += 1) result = peer === rank ? combineReceived(op, result, value, true) : combineReceived(op, await operands[peer], result, false);
  await Promise.all(sends);
  return result;
}
