"""mpi4py's pickled-object ping-pong between ranks 0 and 1, for bench/shm.ts.
    mpirun -n 2 python3 pingpong.py <round trips> <repetitions>    prints µs per hop of each repetition
"""
import sys
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
trips, repetitions = int(sys.argv[1]), int(sys.argv[2])
message = {'id': 7, 'name': 'pivot', 'value': 3.25, 'flags': [True, False]}
for repetition in range(-1, repetitions):
    comm.Barrier()
    start = MPI.Wtime()
    for _ in range(trips):
        if rank == 0:
            comm.send(message, dest=1, tag=1)
            message = comm.recv(source=1, tag=1)
        else:
            message = comm.recv(source=0, tag=1)
            comm.send(message, dest=0, tag=1)
    hop = (MPI.Wtime() - start) * 1e6 / trips / 2
    if rank == 0 and repetition >= 0:
        print(f'{hop:.4f}', flush=True)
