// A 2-rank MPI client for the UCX/MPI tests and benchmark: a ping-pong at
// each size given and an allreduce, every byte checked. Built by the test
// with the MPI's own compiler wrapper (mpicc.openmpi, mpicc.mpich), so one
// source serves both MPIs and the same binary runs over braid0 and TCP.
//
// usage: mpirun -np 2 mpi_pingpong ITERS SIZE...
// For each SIZE: one checked exchange (every byte, both directions), then
// ITERS timed round trips (each message's first and last 8 bytes carry the
// iteration, checked on arrival). Rank 0 prints one line per size:
//   pingpong SIZE B: ITERS iters, half round trip median M us mean A us,
//   B MB/s
// then an allreduce of 1 Ki ints and one of 1 MiB of doubles, checked, and
// "mpi_pingpong: ok". Exit 1 (MPI_Abort) at the first wrong byte.
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void Fail(const char* what, long size, long index) {
  fprintf(stderr, "mpi_pingpong: rank %d: %s (size %ld, at %ld)\n", rank, what,
          size, index);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// The byte at offset i of a checked message from rank `from`.
static unsigned char Pattern(long i, int from) {
  return (unsigned char)(i * 131 + from * 7 + (i >> 8));
}

static void Stamp(unsigned char* buf, long size, uint64_t value) {
  memcpy(buf, &value, size < 8 ? size : 8);
  if (size >= 16) memcpy(buf + size - 8, &value, 8);
}

static void CheckStamp(const unsigned char* buf, long size, uint64_t value) {
  uint64_t head = 0, tail = value;
  memcpy(&head, buf, size < 8 ? size : 8);
  if (size >= 16) memcpy(&tail, buf + size - 8, 8);
  uint64_t mask = size >= 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * size)) - 1);
  if ((head & mask) != (value & mask) || tail != value) {
    Fail("timed message carries the wrong iteration", size, (long)value);
  }
}

static int CompareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void CheckedExchange(unsigned char* buf, long size) {
  int peer = 1 - rank;
  for (int turn = 0; turn < 2; ++turn) {
    if (rank == turn) {
      for (long i = 0; i < size; ++i) buf[i] = Pattern(i, rank);
      MPI_Send(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    } else {
      memset(buf, 0, size);
      MPI_Status st;
      MPI_Recv(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
      int got = 0;
      MPI_Get_count(&st, MPI_BYTE, &got);
      if (got != size) Fail("checked message has the wrong length", size, got);
      for (long i = 0; i < size; ++i) {
        if (buf[i] != Pattern(i, peer)) Fail("wrong byte", size, i);
      }
    }
  }
}

static void PingPong(unsigned char* buf, long size, int iters, double* t) {
  int peer = 1 - rank;
  CheckedExchange(buf, size);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int it = 0; it < iters; ++it) {
    double start = MPI_Wtime();
    if (rank == 0) {
      Stamp(buf, size, (uint64_t)it * 2 + 1);
      MPI_Send(buf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      CheckStamp(buf, size, (uint64_t)it * 2 + 2);
    } else {
      MPI_Recv(buf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      CheckStamp(buf, size, (uint64_t)it * 2 + 1);
      Stamp(buf, size, (uint64_t)it * 2 + 2);
      MPI_Send(buf, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
    }
    t[it] = (MPI_Wtime() - start) / 2;
  }
  if (rank != 0) return;
  double sum = 0;
  for (int it = 0; it < iters; ++it) sum += t[it];
  qsort(t, iters, sizeof(double), CompareDoubles);
  double median = t[iters / 2], mean = sum / iters;
  printf(
      "pingpong %ld B: %d iters, half round trip median %.2f us mean %.2f us, "
      "%.1f MB/s\n",
      size, iters, median * 1e6, mean * 1e6, size / median / 1e6);
}

static void Allreduces(void) {
  enum { kInts = 1024 };
  int in[kInts], out[kInts];
  for (int i = 0; i < kInts; ++i) in[i] = i * (rank + 1);
  MPI_Allreduce(in, out, kInts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < kInts; ++i) {
    if (out[i] != i * 3) Fail("int allreduce sum is wrong", kInts, i);
  }
  const long kDoubles = (1L << 20) / sizeof(double);
  double* din = malloc(kDoubles * sizeof(double));
  double* dout = malloc(kDoubles * sizeof(double));
  if (din == NULL || dout == NULL) Fail("out of memory", kDoubles, 0);
  for (long i = 0; i < kDoubles; ++i) din[i] = (double)(i % 1000) + rank * 0.5;
  MPI_Allreduce(din, dout, (int)kDoubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (long i = 0; i < kDoubles; ++i) {
    if (dout[i] != 2.0 * (double)(i % 1000) + 0.5) {
      Fail("double allreduce sum is wrong", kDoubles, i);
    }
  }
  free(din);
  free(dout);
  if (rank == 0) printf("allreduce: 1024 ints and 1 MiB of doubles correct\n");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || argc < 3) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 %s ITERS SIZE...\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  int iters = atoi(argv[1]);
  if (iters < 1) iters = 1;
  double* t = malloc(iters * sizeof(double));
  for (int a = 2; a < argc; ++a) {
    long bytes = atol(argv[a]);
    if (bytes < 1 || bytes > (1L << 30)) Fail("size out of range", bytes, a);
    unsigned char* buf = malloc(bytes);
    if (buf == NULL || t == NULL) Fail("out of memory", bytes, 0);
    PingPong(buf, bytes, iters, t);
    free(buf);
  }
  free(t);
  Allreduces();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_pingpong: ok\n");
  MPI_Finalize();
  return 0;
}
