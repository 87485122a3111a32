/**
 * allGather nbBDE, bidirectional exchange or recursive doubling (Taboada et al. 2010, Fig. 11, F-MPJ
 * Fig. 8 and 10): in round k each member swaps everything it holds with partner rank ^ 2^k, so the
 * held block doubles each round: log2(size) rounds, the fewest start-ups, for small and medium
 * elements. All rounds' receives are posted up front and the sends are non-blocking.
 * A size that is not a power of two is folded first (as MPICH does for reductions): each rank
 * beyond the largest power of two hands its element to rank - 2^floor(log2 size), which carries
 * it through the exchange and finally sends that rank the whole result.
 */
import type { CollectiveContext } from '../context.js';
import { postReceive } from '../exchange.js';

/** Returns every rank's element, by rank. */
export async function allGatherBdeNonblocking<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const { rank, size } = context;
  let cube = 1;
  while (cube * 2 <= size) cube *= 2;
  if (rank >= cube) {
    const [all] = await Promise.all([context.receive<E[]>(rank - cube), context.send(rank - cube, element)]);
    return all;
  }
  const extra = rank + cube < size ? rank + cube : -1;
  /** The ranks whose elements cube ranks [start, start + count) hold, in the order they travel. */
  const held = (start: number, count: number): number[] => {
    const cores = Array.from({ length: count }, (_, i) => start + i);
    return [...cores, ...cores.map((core) => core + cube).filter((folded) => folded < size)];
  };
  const masks: number[] = [];
  for (let mask = 1; mask < cube; mask *= 2) masks.push(mask);
  const fromExtra = extra >= 0 ? postReceive<E>(context, extra) : null;
  const fromPartners = masks.map((mask) => postReceive<E[]>(context, rank ^ mask));

  const result = new Array<E>(size);
  result[rank] = element;
  if (fromExtra !== null) result[extra] = await fromExtra;
  const sends: Promise<void>[] = [];
  for (const [round, mask] of masks.entries()) {
    const partner = rank ^ mask;
    const mine = held(rank & ~(mask - 1), mask);
    sends.push(context.isend(partner, mine.map((source) => result[source])));
    const theirs = held(partner & ~(mask - 1), mask);
    (await fromPartners[round]).forEach((value, index) => (result[theirs[index]] = value));
  }
  if (extra >= 0) sends.push(context.isend(extra, result));
  await Promise.all(sends);
  return result;
}
