/* mpi-coll: msg-coll written against MPI (MPI_Bcast, MPI_Allreduce on MPI_UINT32_T with MPI_SUM,
 * MPI_Alltoall on bytes), the peer msg-coll is compared with: the same sizes, calls, data
 * checks, figures and JSON keys (coll_pattern.h). */
/* clock_gettime(CLOCK_MONOTONIC) under -std=c11 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_pattern.h"
#include "mpi_options.h"

typedef struct {
    int kinds[3];
    int nkinds;
    size_t min_bytes;
    size_t max_bytes;
    long iterations;
    int json;
} options_t;

static const char usage[] =
    "usage: mpirun -np P mpi-coll [options]\n"
    "OSU-style latency of MPI's collectives, measured as msg-coll measures libmsg's: for each\n"
    "size (the minimum, then x4 up to the maximum), every rank runs the collective back to\n"
    "back (a few warm-up calls, then the timed ones), between barriers. Latency = a rank's\n"
    "elapsed time / calls, the mean over ranks (min and max beside it). Sizes: MPI_Bcast's\n"
    "buffer, MPI_Allreduce's vector (uint32 sum), MPI_Alltoall's block per peer.\n"
    "\n"
    "  --collectives LIST    comma-separated: bcast, allreduce, alltoall (default all three)\n"
    "  --min-bytes BYTES     smallest size (default 8, at least 4); K, M, G suffixes are binary\n"
    "  --max-bytes BYTES     largest size (default 16M)\n"
    "  --iters I             timed calls up to 8 KiB (default 200); larger sizes scale down to\n"
    "                        at least 5\n"
    "  --json                print one JSON object instead of a table\n"
    "  --help                this text\n";

static int usage_error(int verbose, const char *what, const char *value) {
    if (verbose) fprintf(stderr, "mpi-coll: %s '%s' (see --help)\n", what, value);
    return -1;
}

/* "bcast,alltoall" into o->kinds; 0 if a name is not a collective. */
static int parse_collectives(const char *text, options_t *o) {
    char copy[64];
    if (strlen(text) >= sizeof copy) return 0;
    strcpy(copy, text);
    o->nkinds = 0;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name != NULL;
         name = strtok_r(NULL, ",", &save)) {
        int kind = coll_kind_from_name(name);
        if (kind < 0 || o->nkinds == 3) return 0;
        o->kinds[o->nkinds++] = kind;
    }
    return o->nkinds > 0;
}

/* One option at argv[*i]: 0 if taken, -1 after a usage error. */
static int parse_option(int argc, char **argv, int *i, options_t *o, int verbose) {
    int missing = 0;
    const char *v;
    if (!strcmp(argv[*i], "--json")) {
        o->json = 1;
    } else if ((v = option_value(argc, argv, i, "--collectives", &missing)) != NULL) {
        if (!parse_collectives(v, o)) return usage_error(verbose, "--collectives:", v);
    } else if ((v = option_value(argc, argv, i, "--min-bytes", &missing)) != NULL) {
        if (!parse_size(v, &o->min_bytes) || o->min_bytes < 4) {
            return usage_error(verbose, "--min-bytes: not a byte count >= 4:", v);
        }
    } else if ((v = option_value(argc, argv, i, "--max-bytes", &missing)) != NULL) {
        if (!parse_size(v, &o->max_bytes) || o->max_bytes < 4 || o->max_bytes > 0x7fffffff) {
            return usage_error(verbose, "--max-bytes: not a byte count from 4 to 2G-1:", v);
        }
    } else if ((v = option_value(argc, argv, i, "--iters", &missing)) != NULL) {
        if (!parse_count(v, 1000000, &o->iterations)) {
            return usage_error(verbose, "--iters: not a count from 1 to 1000000:", v);
        }
    } else {
        return usage_error(verbose, missing ? "missing value for" : "unknown option", argv[*i]);
    }
    return 0;
}

/* Returns 0 to run, 1 for --help, -1 after a usage error. */
static int parse_options(int argc, char **argv, options_t *o, int verbose) {
    memset(o, 0, sizeof *o);
    parse_collectives("bcast,allreduce,alltoall", o);
    o->min_bytes = 8;
    o->max_bytes = 16u << 20;
    o->iterations = 200;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
        if (parse_option(argc, argv, &i, o, verbose) != 0) return -1;
    }
    if (o->min_bytes > o->max_bytes) {
        return usage_error(verbose, "--min-bytes is larger than --max-bytes:", "");
    }
    return 0;
}

static void call(int kind, unsigned char *send, unsigned char *recv, size_t bytes, int me) {
    if (kind == COLL_BCAST) {
        MPI_Bcast(me == 0 ? send : recv, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    } else if (kind == COLL_ALLREDUCE) {
        MPI_Allreduce(send, recv, (int)(bytes / 4), MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
    } else {
        MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    }
}

typedef struct {
    int kind;
    size_t bytes;
    long iterations;
    double mean_us, min_us, max_us;
} cell_t;

/* One size of one collective; 0 when the result did not match the pattern. */
static int measure(cell_t *c, unsigned char *send, unsigned char *recv, int me, int size) {
    long warmup = coll_warmup(c->iterations);
    coll_fill(c->kind, send, recv, c->bytes, me, size, 0);
    for (long i = 0; i < warmup; ++i) call(c->kind, send, recv, c->bytes, me);
    MPI_Barrier(MPI_COMM_WORLD);
    coll_fill(c->kind, send, recv, c->bytes, me, size, 1);
    double start = now_seconds();
    for (long i = 0; i < c->iterations; ++i) call(c->kind, send, recv, c->bytes, me);
    double mine = (now_seconds() - start) * 1e6 / (double)c->iterations;
    int ok = coll_check(c->kind, recv, c->bytes, me, size, 1), all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &c->min_us, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &c->max_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    c->mean_us = sum / size;
    MPI_Barrier(MPI_COMM_WORLD);
    if (!ok) {
        fprintf(stderr, "mpi-coll: rank %d: %s of %zu B: the result does not match the pattern\n",
                me, coll_kind_name(c->kind), c->bytes);
    }
    return all_ok;
}

static void print_results(const options_t *o, int size, const cell_t *cells, int n) {
    if (o->json) {
        printf("{\"benchmark\":\"mpi-coll\",\"ranks\":%d,\"results\":[", size);
        for (int i = 0; i < n; ++i) {
            const cell_t *c = &cells[i];
            printf(
                "%s{\"collective\":\"%s\",\"bytes\":%zu,\"iterations\":%ld,\"latency_us\":%.3f,"
                "\"min_latency_us\":%.3f,\"max_latency_us\":%.3f,\"bandwidth_mbps\":%.3f}",
                i ? "," : "", coll_kind_name(c->kind), c->bytes, c->iterations, c->mean_us,
                c->min_us, c->max_us, (double)c->bytes / c->mean_us);
        }
        printf("]}\n");
        return;
    }
    printf("# mpi-coll: %d ranks\n", size);
    printf("%-10s %10s %7s %12s %12s %12s %12s\n", "collective", "bytes", "iters", "latency_us",
           "min_us", "max_us", "MB/s");
    for (int i = 0; i < n; ++i) {
        const cell_t *c = &cells[i];
        printf("%-10s %10zu %7ld %12.2f %12.2f %12.2f %12.1f\n", coll_kind_name(c->kind), c->bytes,
               c->iterations, c->mean_us, c->min_us, c->max_us, (double)c->bytes / c->mean_us);
    }
}

/* Every cell of the run; the number measured, or -1 after a failed check or no memory. */
static int run(const options_t *o, int me, int size, cell_t *cells, int max_cells) {
    size_t region = o->max_bytes * (size_t)size;
    unsigned char *send = malloc(region), *recv = malloc(region);
    int n = 0;
    if (send == NULL || recv == NULL) {
        fprintf(stderr, "mpi-coll: rank %d: out of memory\n", me);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int k = 0; k < o->nkinds; ++k) {
        for (size_t bytes = o->min_bytes; bytes <= o->max_bytes && n < max_cells;
             bytes = coll_next_size(bytes, o->max_bytes)) {
            cell_t *c = &cells[n++];
            c->kind = o->kinds[k];
            c->bytes = bytes;
            c->iterations = coll_iterations(o->iterations, bytes);
            if (!measure(c, send, recv, me, size)) {
                n = -1;
                goto out;
            }
        }
    }
out:
    free(send);
    free(recv);
    return n;
}

int main(int argc, char **argv) {
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
    enum { MAX_CELLS = 3 * 64 };
    cell_t cells[MAX_CELLS];
    int n = run(&o, me, size, cells, MAX_CELLS);
    if (n >= 0 && me == 0) print_results(&o, size, cells, n);
    MPI_Finalize();
    return n >= 0 ? 0 : 1;
}
