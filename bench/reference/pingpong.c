/*
 * OSU-style ping-pong between ranks 0 and 1, and MPI_Allreduce of doubles, for bench/shm.ts.
 *   pingpong <bytes> <round trips> <repetitions>    prints µs per hop of each repetition
 *   allreduce <doubles> <calls> <repetitions>       prints µs per call of each repetition (rank 0)
 * Run under mpirun with the shared-memory BTL (vader/sm) between ranks of one host.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pingpong(int rank, long bytes, long trips, int repetitions) {
  char *buffer = malloc(bytes > 0 ? bytes : 1);
  memset(buffer, 1, bytes);
  for (int repetition = -1; repetition < repetitions; repetition++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long i = 0; i < trips; i++) {
      if (rank == 0) {
        MPI_Send(buffer, bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buffer, bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buffer, bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer, bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
    }
    double hop = (MPI_Wtime() - start) * 1e6 / trips / 2;
    /* Repetition -1 warms up. */
    if (rank == 0 && repetition >= 0) printf("%.4f\n", hop);
  }
  free(buffer);
}

static void allreduce(int rank, long count, long calls, int repetitions) {
  double *in = malloc(count * sizeof(double));
  double *out = malloc(count * sizeof(double));
  for (long i = 0; i < count; i++) in[i] = rank + i;
  for (int repetition = -1; repetition < repetitions; repetition++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long i = 0; i < calls; i++) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double call = (MPI_Wtime() - start) * 1e6 / calls;
    if (rank == 0 && repetition >= 0) printf("%.4f\n", call);
  }
  free(in);
  free(out);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: pingpong|allreduce <size> <count> <repetitions>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long size = atol(argv[2]), count = atol(argv[3]);
  int repetitions = atoi(argv[4]);
  if (strcmp(argv[1], "pingpong") == 0) pingpong(rank, size, count, repetitions);
  else allreduce(rank, size, count, repetitions);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
