/**
 * Dissemination barrier (Hensgen, Finkel and Manber; MPICH's barrier): in round k every rank
 * signals rank + 2^k and waits for rank - 2^k (mod size). After ceil(log2(size)) rounds every rank
 * has heard, directly or not, from every other, for any size: no fix-up steps for sizes that are
 * not powers of two, unlike the hypercube.
 */
import type { CollectiveContext } from '../context.js';

export async function barrierDissemination(context: CollectiveContext): Promise<void> {
  const { rank, size } = context;
  // Distances 2^k < size are distinct, so each pair exchanges at most one message per direction.
  for (let distance = 1; distance < size; distance *= 2) {
    await Promise.all([context.send((rank + distance) % size, null), context.receive((rank - distance + size) % size)]);
  }
}
