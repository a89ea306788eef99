/* The command-line plumbing of the MPI benchmarks (mpi-alltoall, mpi-coll): C, header only,
 * with the size syntax of the libmsg benchmarks. */
#ifndef VIADUCT_MPI_OPTIONS_H
#define VIADUCT_MPI_OPTIONS_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "4096", "512K", "16M", "1G": binary multiples, as in msg-alltoall. */
static inline int parse_size(const char *text, size_t *out) {
    if (text == NULL || text[0] < '0' || text[0] > '9') return 0;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0) return 0;
    unsigned long long mult = 1;
    switch (*end) {
        case 'k':
        case 'K':
            mult = 1ull << 10;
            break;
        case 'm':
        case 'M':
            mult = 1ull << 20;
            break;
        case 'g':
        case 'G':
            mult = 1ull << 30;
            break;
        default:
            break;
    }
    if (mult != 1) ++end;
    if (*end == 'i' || *end == 'B') ++end;
    if (*end == 'B') ++end;
    if (*end != '\0' || v > ~0ull / mult) return 0;
    *out = (size_t)(v * mult);
    return 1;
}

/* A decimal count from 1 to max. */
static inline int parse_count(const char *text, long max, long *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1 || v > max) return 0;
    *out = v;
    return 1;
}

/* Accepts "--name value" and "--name=value"; returns the value or NULL if argv[*i] is not
 * this option. *missing is set when the option is there but its value is not. */
static inline const char *option_value(int argc, char **argv, int *i, const char *name,
                                       int *missing) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

#endif
