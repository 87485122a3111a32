/*
 * Collectives of MPI_COMM_WORLD timed by rank 0, for bench/manycore.ts (the same figures as its
 * ccjs endpoint and bench/reference/collectives.py, with the same sizes and counts):
 *   collectives <repetitions> <op>:<bytes>:<calls> ...
 *     barrier:0:<calls>           MPI_Barrier
 *     bcast:<bytes>:<calls>       MPI_Bcast of <bytes> MPI_BYTEs, the root going round the ranks
 *     allreduce:<bytes>:<calls>   MPI_Allreduce of <bytes>/8 doubles, MPI_SUM
 * Each op runs one warm-up repetition, then <repetitions> repetitions of <calls> calls, each after a
 * barrier; rank 0 prints "<op>:<bytes> <µs per call>" for each. Run under mpirun over vader.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void call(const char *op, char *buffer, double *in, double *out, long bytes, long i, int size) {
  if (strcmp(op, "barrier") == 0) MPI_Barrier(MPI_COMM_WORLD);
  else if (strcmp(op, "bcast") == 0) MPI_Bcast(buffer, bytes, MPI_BYTE, i % size, MPI_COMM_WORLD);
  else MPI_Allreduce(in, out, bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: collectives <repetitions> <op>:<bytes>:<calls> ...\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int repetitions = atoi(argv[1]);
  for (int a = 2; a < argc; a++) {
    char op[32];
    long bytes, calls;
    if (sscanf(argv[a], "%31[a-z]:%ld:%ld", op, &bytes, &calls) != 3 ||
        (strcmp(op, "barrier") != 0 && strcmp(op, "bcast") != 0 && strcmp(op, "allreduce") != 0)) {
      if (rank == 0) fprintf(stderr, "collectives: '%s' is not barrier|bcast|allreduce:<bytes>:<calls>\n", argv[a]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buffer = malloc(bytes > 0 ? bytes : 1);
    double *in = malloc(bytes > 8 ? bytes : 8), *out = malloc(bytes > 8 ? bytes : 8);
    memset(buffer, 1, bytes);
    for (long i = 0; i < bytes / 8; i++) in[i] = rank + i;
    /* Repetition -1 warms up. */
    for (int repetition = -1; repetition < repetitions; repetition++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double start = MPI_Wtime();
      for (long i = 0; i < calls; i++) call(op, buffer, in, out, bytes, i, size);
      double microseconds = (MPI_Wtime() - start) * 1e6 / calls;
      if (rank == 0 && repetition >= 0) printf("%s:%ld %.4f\n", op, bytes, microseconds);
    }
    free(buffer);
    free(in);
    free(out);
  }
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
