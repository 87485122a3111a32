/**
 * World: an SPMD script in three lines to the first message (mpi4py's COMM_WORLD). Every endpoint
 * sends to the next rank, receives from the previous one and sums the ranks.
 *   npx ccjrun -n 4 examples/tutorial/world.ts      (or --threads 2, or mpirun -np 4 node dist/examples/tutorial/world.js)
 */
import { world, Reductions } from 'ccjs';

const comm = await world();
await comm.sendAsync(comm.group, `hello from ${comm.rank}`, (comm.rank + 1) % comm.size);
const greeting = await comm.receive<string>(comm.group, (comm.rank + comm.size - 1) % comm.size);
const total = await comm.allReduce(comm.group, comm.rank, Reductions.SUM);
console.log(`rank ${comm.rank} of ${comm.size} got '${greeting}'; the ranks sum to ${total}`);
await comm.close();
