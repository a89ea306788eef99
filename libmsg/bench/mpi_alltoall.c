/* mpi-alltoall: msg-alltoall's re-issue pattern written against MPI (MPI_Isend/MPI_Irecv and
 * MPI_Waitany), the peer msg-alltoall is compared with; same options, figures and JSON keys. */
/* clock_gettime(CLOCK_MONOTONIC) under -std=c11 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_options.h"

enum { DATA_TAG = 2 };

typedef struct {
    size_t message_bytes;
    long iterations;
    long repeats;
    int rotate;
    size_t region_bytes;
    int json;
} options_t;

static const char usage[] =
    "usage: mpirun -np P mpi-alltoall [options]\n"
    "Each rank keeps one MPI_Isend to and one MPI_Irecv from every other rank in flight and\n"
    "re-issues each as MPI_Waitany reports it complete, until it has been issued I times.\n"
    "Per-rank bidirectional MB/s = (bytes sent + bytes received) / elapsed, MB = 10^6 bytes;\n"
    "aggregate = sum over ranks.\n"
    "\n"
    "  --bytes BYTES         message size (default 512K); K, M, G suffixes are binary\n"
    "  --iters I             issues of each send and each receive (default 50)\n"
    "  --repeat R            measure R times in this job and report the median repeat (by\n"
    "                        per-rank mean; default 1)\n"
    "  --rotate              move through a region larger than the caches (DRAM) instead of\n"
    "                        reusing one buffer per operation\n"
    "  --region BYTES        with --rotate: region per direction (default 128M)\n"
    "  --json                print one JSON object instead of a table\n"
    "  --help                this text\n";

/* Prints a usage error on the rank that reports (rank 0) and returns -1. */
static int usage_error(int verbose, const char *what, const char *value) {
    if (verbose) fprintf(stderr, "mpi-alltoall: %s '%s' (see --help)\n", what, value);
    return -1;
}

/* Returns 0 to run, 1 for --help, -1 after a usage error. */
static int parse_options(int argc, char **argv, options_t *o, int verbose) {
    o->message_bytes = 512 * 1024;
    o->iterations = 50;
    o->repeats = 1;
    o->rotate = 0;
    o->region_bytes = 128u << 20;
    o->json = 0;
    for (int i = 1; i < argc; ++i) {
        int missing = 0;
        const char *v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
        if (!strcmp(argv[i], "--json")) {
            o->json = 1;
        } else if (!strcmp(argv[i], "--rotate")) {
            o->rotate = 1;
        } else if (!strcmp(argv[i], "--reuse")) {
            o->rotate = 0;
        } else if ((v = option_value(argc, argv, &i, "--bytes", &missing)) != NULL) {
            if (!parse_size(v, &o->message_bytes) || o->message_bytes == 0) {
                return usage_error(verbose, "--bytes: not a byte count:", v);
            }
        } else if ((v = option_value(argc, argv, &i, "--region", &missing)) != NULL) {
            if (!parse_size(v, &o->region_bytes)) {
                return usage_error(verbose, "--region: not a byte count:", v);
            }
        } else if ((v = option_value(argc, argv, &i, "--iters", &missing)) != NULL) {
            if (!parse_count(v, 1000000000, &o->iterations)) {
                return usage_error(verbose, "--iters: not a count >= 1:", v);
            }
        } else if ((v = option_value(argc, argv, &i, "--repeat", &missing)) != NULL) {
            if (!parse_count(v, 10000, &o->repeats)) {
                return usage_error(verbose, "--repeat: not a count from 1 to 10000:", v);
            }
        } else {
            return usage_error(verbose, missing ? "missing value for" : "unknown option", argv[i]);
        }
    }
    return 0;
}

/* Message buffers for one direction, as in msg-alltoall: reusing, each operation owns a slot;
 * rotating, an issue takes the oldest free slot so messages walk the whole region. */
typedef struct {
    char *region;
    size_t message_bytes;
    size_t *free_slots; /* ring of free slot numbers */
    size_t capacity, head, count;
} buffer_pool_t;

static int pool_init(buffer_pool_t *p, size_t message_bytes, size_t slots) {
    size_t bytes = (message_bytes * slots + 4095) / 4096 * 4096;
    p->region = aligned_alloc(4096, bytes);
    p->free_slots = malloc(slots * sizeof *p->free_slots);
    if (p->region == NULL || p->free_slots == NULL) return 0;
    memset(p->region, 0, bytes); /* fault the pages in before anything is timed */
    p->message_bytes = message_bytes;
    p->capacity = slots;
    p->head = 0;
    p->count = slots;
    for (size_t i = 0; i < slots; ++i) p->free_slots[i] = i;
    return 1;
}

static void pool_free(buffer_pool_t *p) {
    free(p->region);
    free(p->free_slots);
}

static size_t pool_acquire(buffer_pool_t *p) {
    size_t slot = p->free_slots[p->head];
    p->head = (p->head + 1) % p->capacity;
    p->count -= 1;
    return slot;
}

static void pool_release(buffer_pool_t *p, size_t slot) {
    p->free_slots[(p->head + p->count) % p->capacity] = slot;
    p->count += 1;
}

static char *pool_at(const buffer_pool_t *p, size_t slot) {
    return p->region + slot * p->message_bytes;
}

/* Sender, receiver and iteration at both ends of each message, as in msg-alltoall. */
typedef struct {
    uint32_t magic;
    int32_t source;
    int32_t dest;
    uint32_t iteration;
} mark_t;
#define MARK_MAGIC 0x76696164u

static mark_t mark_for(int source, int dest, long iteration) {
    mark_t m = {MARK_MAGIC, source, dest, (uint32_t)iteration};
    return m;
}

static void write_marks(char *buf, size_t bytes, const mark_t *m) {
    memcpy(buf, m, bytes < sizeof *m ? bytes : sizeof *m);
    if (bytes >= 2 * sizeof *m) memcpy(buf + bytes - sizeof *m, m, sizeof *m);
}

static int has_marks(const char *buf, size_t bytes, const mark_t *m) {
    if (memcmp(buf, m, bytes < sizeof *m ? bytes : sizeof *m) != 0) return 0;
    return bytes < 2 * sizeof *m || memcmp(buf + bytes - sizeof *m, m, sizeof *m) == 0;
}

typedef struct {
    int peer;
    int is_send;
    long issued;
    long completed;
    size_t slot;
} operation_t;

typedef struct {
    double elapsed_seconds;
    double bidir_mbps;
    double connect_seconds;
    double bytes_sent;
    double bytes_received;
} rank_result_t;

typedef struct {
    const options_t *o;
    int me;
    buffer_pool_t sends, recvs;
    operation_t *ops;
    MPI_Request *requests; /* requests[i] belongs to ops[i] */
    int nops;
    uint64_t bytes_sent, bytes_received;
} test_t;

static void issue(test_t *t, int i) {
    operation_t *op = &t->ops[i];
    buffer_pool_t *pool = op->is_send ? &t->sends : &t->recvs;
    if (t->o->rotate) op->slot = pool_acquire(pool);
    char *buf = pool_at(pool, op->slot);
    const int count = (int)t->o->message_bytes;
    if (op->is_send) {
        mark_t m = mark_for(t->me, op->peer, op->issued);
        write_marks(buf, t->o->message_bytes, &m);
        MPI_Isend(buf, count, MPI_BYTE, op->peer, DATA_TAG, MPI_COMM_WORLD, &t->requests[i]);
    } else {
        MPI_Irecv(buf, count, MPI_BYTE, op->peer, DATA_TAG, MPI_COMM_WORLD, &t->requests[i]);
    }
    op->issued += 1;
}

/* Returns 0, or -1 after printing why the completion is wrong. */
static int complete(test_t *t, int i, const MPI_Status *status) {
    operation_t *op = &t->ops[i];
    buffer_pool_t *pool = op->is_send ? &t->sends : &t->recvs;
    if (op->is_send) {
        t->bytes_sent += t->o->message_bytes;
    } else {
        int count = 0;
        MPI_Get_count(status, MPI_BYTE, &count);
        char *buf = pool_at(pool, op->slot);
        mark_t m = mark_for(op->peer, t->me, op->completed);
        if (status->MPI_SOURCE != op->peer || (size_t)count != t->o->message_bytes ||
            !has_marks(buf, t->o->message_bytes, &m)) {
            fprintf(stderr,
                    "mpi-alltoall: rank %d: receive from rank %d, iteration %ld: got %d bytes "
                    "from rank %d, or the payload marks do not match\n",
                    t->me, op->peer, op->completed, count, status->MPI_SOURCE);
            return -1;
        }
        mark_t wiped = {0, 0, 0, 0};
        write_marks(buf, t->o->message_bytes, &wiped);
        t->bytes_received += t->o->message_bytes;
    }
    op->completed += 1;
    if (t->o->rotate) pool_release(pool, op->slot);
    if (op->issued < t->o->iterations) issue(t, i);
    return 0;
}

/* Buffers, operations and requests, once for every repeat. */
static int setup_test(test_t *t, int size) {
    const options_t *o = t->o;
    int peers = size - 1;
    size_t slots = (size_t)peers;
    if (o->rotate && o->region_bytes / o->message_bytes > slots) {
        slots = o->region_bytes / o->message_bytes;
    }
    t->nops = 2 * peers;
    t->ops = calloc((size_t)t->nops, sizeof *t->ops);
    t->requests = malloc((size_t)t->nops * sizeof *t->requests);
    if (t->ops == NULL || t->requests == NULL || !pool_init(&t->sends, o->message_bytes, slots) ||
        !pool_init(&t->recvs, o->message_bytes, slots)) {
        fprintf(stderr, "mpi-alltoall: rank %d: out of memory\n", t->me);
        return -1;
    }
    /* Receives first, and each rank starts with the rank after it: the same order as
     * msg-alltoall. */
    for (int k = 0; k < t->nops; ++k) {
        operation_t *op = &t->ops[k];
        op->is_send = k >= peers;
        op->peer = (t->me + 1 + k % peers) % size;
        if (!o->rotate) op->slot = pool_acquire(op->is_send ? &t->sends : &t->recvs);
        t->requests[k] = MPI_REQUEST_NULL;
    }
    return 0;
}

/* One measurement. */
static int run_test(test_t *t, rank_result_t *result) {
    const options_t *o = t->o;
    for (int k = 0; k < t->nops; ++k) t->ops[k].issued = t->ops[k].completed = 0;
    t->bytes_sent = t->bytes_received = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now_seconds();
    for (int k = 0; k < t->nops; ++k) issue(t, k);
    long remaining = (long)t->nops * o->iterations;
    while (remaining > 0) {
        int index = MPI_UNDEFINED;
        MPI_Status status;
        MPI_Waitany(t->nops, t->requests, &index, &status);
        if (index == MPI_UNDEFINED) break;
        if (complete(t, index, &status) != 0) return -1;
        remaining -= 1;
    }
    double elapsed = now_seconds() - start;
    result->elapsed_seconds = elapsed;
    result->bytes_sent = (double)t->bytes_sent;
    result->bytes_received = (double)t->bytes_received;
    result->bidir_mbps = (double)(t->bytes_sent + t->bytes_received) / elapsed / 1e6;
    return 0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double rep_mean(const rank_result_t *rep, int size) {
    double sum = 0;
    for (int r = 0; r < size; ++r) sum += rep[r].bidir_mbps;
    return sum / size;
}

/* all[k * size + r]: rank r in repeat k. Prints the median repeat (by per-rank mean; the lower
 * middle of an even count), as msg-alltoall does. */
static void print_results(const options_t *o, int size, const rank_result_t *all_reps) {
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(library, &len);
    library[strcspn(library, "\n,")] = '\0'; /* first clause, e.g. "Open MPI v4.1.4" */

    const long reps = o->repeats;
    double *means = malloc((size_t)reps * sizeof *means);
    double *sorted = malloc((size_t)reps * sizeof *sorted);
    if (means == NULL || sorted == NULL) {
        fprintf(stderr, "mpi-alltoall: out of memory\n");
        exit(1);
    }
    for (long k = 0; k < reps; ++k) sorted[k] = means[k] = rep_mean(all_reps + k * size, size);
    qsort(sorted, (size_t)reps, sizeof *sorted, compare_doubles);
    long median = 0;
    while (means[median] != sorted[(reps - 1) / 2]) median += 1;
    const rank_result_t *all = all_reps + median * size;

    double sum = 0, min = all[0].bidir_mbps, max = all[0].bidir_mbps;
    double max_elapsed = 0, max_connect = 0;
    for (int r = 0; r < size; ++r) {
        sum += all[r].bidir_mbps;
        if (all[r].bidir_mbps < min) min = all[r].bidir_mbps;
        if (all[r].bidir_mbps > max) max = all[r].bidir_mbps;
        if (all[r].elapsed_seconds > max_elapsed) max_elapsed = all[r].elapsed_seconds;
        if (all[r].connect_seconds > max_connect) max_connect = all[r].connect_seconds;
    }
    double mean = sum / size;
    if (o->json) {
        printf(
            "{\"benchmark\":\"mpi-alltoall\",\"ranks\":%d,\"message_bytes\":%zu,"
            "\"iterations\":%ld,\"buffers\":\"%s\",\"mode\":\"unrestricted\","
            "\"protocol\":\"mpi\",\"provider\":\"mpi\",\"library\":\"%s\","
            "\"per_rank_bidir_mbps\":%.3f,\"aggregate_mbps\":%.3f,"
            "\"min_rank_bidir_mbps\":%.3f,\"max_rank_bidir_mbps\":%.3f,"
            "\"elapsed_seconds\":%.4f,\"connect_seconds\":%.4f,\"repeats\":%ld,"
            "\"per_rank_bidir_mbps_repeats\":[",
            size, o->message_bytes, o->iterations, o->rotate ? "rotate" : "reuse", library, mean,
            sum, min, max, max_elapsed, max_connect, reps);
        for (long k = 0; k < reps; ++k) printf("%s%.3f", k > 0 ? "," : "", means[k]);
        printf("]}\n");
    } else {
        printf("# mpi-alltoall: %d ranks, %zu B x %ld iterations, buffers %s, %s, connect %.4f s\n",
               size, o->message_bytes, o->iterations, o->rotate ? "rotated" : "reused", library,
               max_connect);
        printf("# bidirectional MB/s = (bytes sent + received) / elapsed, MB = 10^6 B\n");
        if (reps > 1) {
            printf("# per-rank mean of each of %ld repeats:", reps);
            for (long k = 0; k < reps; ++k) printf(" %.1f", means[k]);
            printf("\n# the median repeat (%ld) in detail:\n", median + 1);
        }
        printf("%6s %12s %14s %14s %14s\n", "rank", "elapsed_s", "sent_B", "received_B",
               "bidir_MB/s");
        for (int r = 0; r < size; ++r) {
            printf("%6d %12.4f %14.0f %14.0f %14.1f\n", r, all[r].elapsed_seconds,
                   all[r].bytes_sent, all[r].bytes_received, all[r].bidir_mbps);
        }
        printf("per-rank bidirectional MB/s: mean %.1f, min %.1f, max %.1f; aggregate %.1f\n", mean,
               min, max, sum);
    }
    free(means);
    free(sorted);
}

/* Open MPI connects peers lazily, on first use; one small message to and from every peer
 * before the barrier keeps that out of the timed loop, as msg_init does for libmsg. */
static void connect_peers(int me, int size) {
    char out = 1, in[1];
    for (int i = 1; i < size; ++i) {
        int to = (me + i) % size, from = (me - i + size) % size;
        MPI_Sendrecv(&out, 1, MPI_BYTE, to, DATA_TAG + 1, in, 1, MPI_BYTE, from, DATA_TAG + 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv) {
    double init_start = now_seconds();
    MPI_Init(&argc, &argv);
    int me = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    options_t o;
    int parsed = parse_options(argc, argv, &o, me == 0);
    if (parsed != 0) {
        if (parsed > 0 && me == 0) fputs(usage, stdout);
        MPI_Finalize();
        return parsed > 0 ? 0 : 2;
    }
    if (size < 2) {
        if (me == 0) fprintf(stderr, "mpi-alltoall: needs at least 2 ranks (mpirun -np P)\n");
        MPI_Finalize();
        return 1;
    }
    if (o.message_bytes > (size_t)0x7fffffff) {
        if (me == 0) fprintf(stderr, "mpi-alltoall: --bytes must fit an MPI int count\n");
        MPI_Finalize();
        return 2;
    }
    connect_peers(me, size);
    rank_result_t mine = {0, 0, now_seconds() - init_start, 0, 0};

    test_t t;
    memset(&t, 0, sizeof t);
    t.o = &o;
    t.me = me;
    const long reps = o.repeats;
    rank_result_t *all = me == 0 ? malloc((size_t)(reps * size) * sizeof *all) : NULL;
    if (setup_test(&t, size) != 0 || (me == 0 && all == NULL)) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long k = 0; k < reps; ++k) {
        if (run_test(&t, &mine) != 0) {
            /* The other ranks would wait forever for this one's messages: end the whole job. */
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Gather(&mine, 5, MPI_DOUBLE, me == 0 ? all + k * size : NULL, 5, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
    }
    if (me == 0) print_results(&o, size, all);

    free(all);
    pool_free(&t.sends);
    pool_free(&t.recvs);
    free(t.ops);
    free(t.requests);
    MPI_Finalize();
    return 0;
}
