/**
 * allGather by MPICH's recursive doubling (also MPJ Express's "BT" allGather, Taboada et al. 2010, Table 1,
 * whose binomial gather + broadcast reading is already 'gather-broadcast'): in round k each
 * member exchanges (sendrecv, blocking per round) its block of 2^k ranks with partner rank ^ 2^k.
 * Unlike nbBDE it needs no folding for sizes that are not powers of two: a member whose partner
 * does not exist skips the exchange, and the members of its half that did exchange pass the
 * missing block on along a binomial tree inside that half, so every round ends with each
 * member holding its whole aligned block of 2^(k+1) ranks.
 */
import type { CollectiveContext } from '../context.js';
import { sendReceive } from '../exchange.js';

/** Returns every rank's element, by rank. */
export async function allGatherRecursiveDoubling<E>(context: CollectiveContext, element: E): Promise<E[]> {
  const { rank, size } = context;
  const result = new Array<E>(size);
  result[rank] = element;
  const place = (start: number, values: readonly E[]) => values.forEach((value, index) => (result[start + index] = value));
  for (let mask = 1; mask < size; mask *= 2) {
    const partner = rank ^ mask;
    // This member holds the aligned block [myStart, myStart + mask), clipped to the group.
    const myStart = rank & ~(mask - 1);
    const partnerStart = partner & ~(mask - 1);
    if (partner < size) {
      place(partnerStart, await sendReceive<E[]>(context, partner, result.slice(myStart, Math.min(myStart + mask, size)), partner));
    }
    if (partnerStart < size && partnerStart + mask > size) {
      // The partner block [partnerStart, size) is short: the first `completed` members of this
      // block got it and hand it on to the rest, halving the subtrees each step.
      const completed = size - partnerStart;
      for (let half = mask / 2; half >= 1; half /= 2) {
        const peer = rank ^ half;
        const haves = (rank & ~(2 * half - 1)) + completed;
        if (peer > rank && rank < haves && peer >= haves) await context.send(peer, result.slice(partnerStart, size));
        else if (peer < rank && peer < haves && rank >= haves) place(partnerStart, await context.receive<E[]>(peer));
      }
    }
  }
  return result;
}
