"""mpi4py's collectives timed by rank 0, for bench/manycore.ts (the same figures, sizes and counts
as bench/reference/collectives.c and the ccjs endpoint):
    mpirun -n P python3 collectives.py <repetitions> <op>:<bytes>:<calls> ...
      barrier:0:<calls>            comm.Barrier()
      bcast:<bytes>:<calls>        comm.Bcast of a bytearray, the root going round the ranks
      allreduce:<bytes>:<calls>    comm.Allreduce of <bytes>/8 doubles (array('d')), MPI.SUM
      allreduce-object:0:<calls>   comm.allreduce of a float (pickled), sum
      bcast-object:0:<calls>       comm.bcast of a small dict (pickled), the root going round the ranks
Each op runs one warm-up repetition, then <repetitions> repetitions of <calls> calls, each after a
barrier; rank 0 prints "<op>:<bytes> <µs per call>" for each. Needs no numpy.
"""
import sys
from array import array
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
# The small object of bench/reference/pingpong.py and bench/manycore.ts.
SMALL_OBJECT = {'id': 7, 'name': 'pivot', 'value': 3.25, 'flags': [True, False]}


def operation(op, nbytes):
    """One call of `op` as a function of the call's index."""
    if op == 'barrier':
        return lambda i: comm.Barrier()
    if op == 'bcast':
        buffer = bytearray(b'\x01' * nbytes)
        return lambda i: comm.Bcast(buffer, root=i % size)
    if op == 'allreduce':
        data = array('d', (rank + j for j in range(nbytes // 8)))
        result = array('d', bytes(len(data) * 8))
        return lambda i: comm.Allreduce(data, result, op=MPI.SUM)
    if op == 'allreduce-object':
        return lambda i: comm.allreduce(rank + 0.5, op=MPI.SUM)
    if op == 'bcast-object':
        return lambda i: comm.bcast(SMALL_OBJECT if rank == i % size else None, root=i % size)
    raise ValueError(f"'{op}' is not barrier|bcast|allreduce|allreduce-object|bcast-object")


repetitions = int(sys.argv[1])
for spec in sys.argv[2:]:
    op, nbytes, calls = spec.split(':')
    nbytes, calls = int(nbytes), int(calls)
    run = operation(op, nbytes)
    for repetition in range(-1, repetitions):
        comm.Barrier()
        start = MPI.Wtime()
        for i in range(calls):
            run(i)
        microseconds = (MPI.Wtime() - start) * 1e6 / calls
        if rank == 0 and repetition >= 0:
            print(f'{op}:{nbytes} {microseconds:.4f}', flush=True)
