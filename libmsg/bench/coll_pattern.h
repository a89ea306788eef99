/* What msg-coll and its MPI peer mpi-coll share, so that both measure the same thing: the
 * collectives by name, the sizes and call counts, and the data each call carries and how its
 * result is checked. C (mpi-coll is C); header only. */
#ifndef VIADUCT_COLL_PATTERN_H
#define VIADUCT_COLL_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { COLL_BCAST = 0, COLL_ALLREDUCE = 1, COLL_ALLTOALL = 2 };

static inline const char *coll_kind_name(int kind) {
    switch (kind) {
        case COLL_BCAST:
            return "bcast";
        case COLL_ALLREDUCE:
            return "allreduce";
        default:
            return "alltoall";
    }
}

/* COLL_* for "bcast", "allreduce" or "alltoall"; -1 for anything else. */
static inline int coll_kind_from_name(const char *name) {
    for (int kind = COLL_BCAST; kind <= COLL_ALLTOALL; ++kind) {
        if (strcmp(name, coll_kind_name(kind)) == 0) return kind;
    }
    return -1;
}

/* The size after `bytes`: four times it, and the maximum itself once before passing it. */
static inline size_t coll_next_size(size_t bytes, size_t max_bytes) {
    size_t next = bytes * 4;
    return next > max_bytes && bytes < max_bytes ? max_bytes : next;
}

/* Timed calls at a size: all of them up to 8 KiB, then fewer as the size grows (the same
 * bytes per size), never under 5. */
static inline long coll_iterations(long iterations, size_t bytes) {
    if (bytes <= 8192) return iterations;
    long scaled = (long)((double)iterations * 8192.0 / (double)bytes);
    if (scaled < 5) scaled = 5;
    return scaled < iterations ? scaled : iterations;
}

/* Untimed calls before the timed ones. */
static inline long coll_warmup(long iterations) {
    return iterations / 10 > 1 ? iterations / 10 : 1;
}

/* Byte k of alltoall's block from `from` to `to`; bcast's byte k is the block from 0 to 0. */
static inline unsigned char coll_byte(int from, int to, size_t k, unsigned round) {
    return (unsigned char)((unsigned)from * 31u + (unsigned)to * 17u + (unsigned)k * 7u +
                           round * 13u + 1u);
}

/* allreduce's element i from rank r: (r + 1)(i + round + 1), so the sum over P ranks is
 * (i + round + 1) P (P + 1) / 2, all modulo 2^32. */
static inline uint32_t coll_element(int rank, size_t i, unsigned round) {
    return (uint32_t)(rank + 1) * (uint32_t)(i + round + 1);
}

/* Fills what `rank` sends in round `round` of a call of `bytes` (bcast: the root's buffer,
 * send; allreduce: bytes / 4 elements; alltoall: one block of bytes per rank) and clears
 * what it receives, so that a result left from another round fails coll_check. */
static inline void coll_fill(int kind, unsigned char *send, unsigned char *recv, size_t bytes,
                             int rank, int size, unsigned round) {
    size_t k;
    int to;
    memset(recv, 0, kind == COLL_ALLTOALL ? bytes * (size_t)size : bytes);
    if (kind == COLL_BCAST) {
        if (rank == 0) {
            for (k = 0; k < bytes; ++k) send[k] = coll_byte(0, 0, k, round);
        }
    } else if (kind == COLL_ALLREDUCE) {
        for (k = 0; k < bytes / 4; ++k) {
            uint32_t v = coll_element(rank, k, round);
            memcpy(send + 4 * k, &v, 4);
        }
    } else {
        for (to = 0; to < size; ++to) {
            for (k = 0; k < bytes; ++k)
                send[(size_t)to * bytes + k] = coll_byte(rank, to, k, round);
        }
    }
}

/* 1 when recv holds what `rank` should have received in round `round`, else 0. */
static inline int coll_check(int kind, const unsigned char *recv, size_t bytes, int rank, int size,
                             unsigned round) {
    size_t k;
    int from;
    if (kind == COLL_BCAST) {
        if (rank == 0) return 1;
        for (k = 0; k < bytes; ++k) {
            if (recv[k] != coll_byte(0, 0, k, round)) return 0;
        }
    } else if (kind == COLL_ALLREDUCE) {
        uint32_t ranks_sum = (uint32_t)size * (uint32_t)(size + 1) / 2u;
        for (k = 0; k < bytes / 4; ++k) {
            uint32_t v;
            memcpy(&v, recv + 4 * k, 4);
            if (v != (uint32_t)(k + round + 1) * ranks_sum) return 0;
        }
    } else {
        for (from = 0; from < size; ++from) {
            for (k = 0; k < bytes; ++k) {
                if (recv[(size_t)from * bytes + k] != coll_byte(from, rank, k, round)) return 0;
            }
        }
    }
    return 1;
}

#endif
