// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * An MPI job that checks every byte it moves: ping-pong of 1 B .. 4 MiB
 * between rank r and rank r + size/2 (the other namespace when ranks fill
 * namespaces in order), MPI_Allreduce of a vector, MPI_Alltoall, and a large
 * non-contiguous send (a strided MPI_Type_vector).  Prints
 * "mpi_check: N checks passed" from rank 0, or the first mismatches; exits 1
 * on any error.
 *   mpi_check            the checks above
 *   mpi_check stream S   1 MiB ping-pongs for up to S seconds, printing
 *                        "streaming rank R pid P" once data flows (for a
 *                        test that kills a rank mid-transfer)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, bad;
static long checks;
static double t0;

/* Rank 0 tells how far the job got (a hang shows where it stopped). */
static void phase(const char *name)
{
	if (rank == 0) {
		printf("mpi_check: %s done at %.1f s\n", name, MPI_Wtime() - t0);
		fflush(stdout);
	}
}

static void expect(int ok, const char *what, long a, long b)
{
	checks++;
	if (!ok && bad++ < 10)
		fprintf(stderr, "rank %d: FAIL: %s (%ld, %ld)\n", rank, what, a, b);
}

/* The byte at position I of a message of LEN bytes sent by rank FROM. */
static uint8_t pat(int from, size_t len, size_t i)
{
	return (uint8_t)(i * 131 + len * 7 + (size_t)from * 29 + (i >> 12));
}

static int peer_of(int r)
{
	return r < size / 2 ? r + size / 2 : r - size / 2;
}

static void pingpong(void)
{
	const size_t max = 4u << 20;
	uint8_t *out = malloc(max), *in = malloc(max);
	int peer = peer_of(rank), first = rank < size / 2;

	for (size_t len = 1; len <= max; len *= 2) {
		for (size_t i = 0; i < len; i++)
			out[i] = pat(rank, len, i);
		memset(in, 0, len);
		if (first) {
			MPI_Send(out, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(in, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(in, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(out, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
		}
		size_t i = 0;
		while (i < len && in[i] == pat(peer, len, i))
			i++;
		expect(i == len, "ping-pong data (size, first bad byte)", (long)len, (long)i);
	}
	free(out);
	free(in);
}

static void allreduce(void)
{
	enum { N = 1 << 18 };
	int64_t *v = malloc(N * sizeof(*v)), *sum = malloc(N * sizeof(*sum));
	long wrong = 0;

	for (int i = 0; i < N; i++)
		v[i] = (int64_t)i * (rank + 1) + rank;
	MPI_Allreduce(v, sum, N, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < N; i++) {
		int64_t want = (int64_t)i * size * (size + 1) / 2 + (int64_t)size * (size - 1) / 2;

		wrong += sum[i] != want;
	}
	expect(wrong == 0, "allreduce (elements wrong, of)", wrong, N);
	free(v);
	free(sum);
}

static void alltoall(void)
{
	enum { B = 65536 };   /* ints per block: 256 KiB */
	int *out = malloc((size_t)B * size * sizeof(int)), *in = malloc((size_t)B * size * sizeof(int));
	long wrong = 0;

	for (int d = 0; d < size; d++)
		for (int i = 0; i < B; i++)
			out[d * B + i] = rank * 1000003 + d * 7919 + i;
	MPI_Alltoall(out, B, MPI_INT, in, B, MPI_INT, MPI_COMM_WORLD);
	for (int s = 0; s < size; s++)
		for (int i = 0; i < B; i++)
			wrong += in[s * B + i] != s * 1000003 + rank * 7919 + i;
	expect(wrong == 0, "alltoall (elements wrong, of)", wrong, (long)B * size);
	free(out);
	free(in);
}

/* Every other double of a 16 MiB array (8 MiB of data) goes as one message
 * of a strided type; the receiver takes it contiguous. */
static void noncontig(void)
{
	enum { COUNT = 1 << 20 };
	MPI_Datatype vec;
	int peer = peer_of(rank);

	MPI_Type_vector(COUNT, 1, 2, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	if (rank < size / 2) {
		double *a = malloc(2 * (size_t)COUNT * sizeof(double));

		for (size_t i = 0; i < 2 * (size_t)COUNT; i++)
			a[i] = i % 2 ? -1.0 : (double)i * 0.5 + rank;
		MPI_Send(a, 1, vec, peer, 3, MPI_COMM_WORLD);
		free(a);
	} else {
		double *b = calloc(COUNT, sizeof(double));
		long wrong = 0;

		MPI_Recv(b, COUNT, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (size_t i = 0; i < COUNT; i++)
			wrong += b[i] != (double)i + peer;
		expect(wrong == 0, "non-contiguous send (elements wrong, of)", wrong, COUNT);
		free(b);
	}
	MPI_Type_free(&vec);
}

static void stream(int seconds)
{
	const int len = 1 << 20;
	uint8_t *buf = malloc(len);
	int peer = peer_of(rank), first = rank < size / 2;
	double end = MPI_Wtime() + seconds;

	memset(buf, rank, len);
	for (long n = 0; MPI_Wtime() < end; n++) {
		if (first) {
			MPI_Send(buf, len, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
			MPI_Recv(buf, len, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, len, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, len, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
		}
		if (n == 10) {
			printf("streaming rank %d pid %d\n", rank, (int)getpid());
			fflush(stdout);
		}
	}
	free(buf);
}

int main(int argc, char **argv)
{
	long total = 0;
	int nbad;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || size % 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs an even number of ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (argc > 2 && !strcmp(argv[1], "stream")) {
		stream(atoi(argv[2]));
		MPI_Finalize();
		return 0;
	}
	t0 = MPI_Wtime();
	pingpong();
	phase("ping-pong 1 B..4 MiB");
	allreduce();
	phase("allreduce");
	alltoall();
	phase("alltoall");
	noncontig();
	phase("non-contiguous send");
	MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Reduce(&checks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %ld checks on %d ranks, %d failed\n", total, size, nbad);
	MPI_Finalize();
	return nbad ? 1 : 0;
}
