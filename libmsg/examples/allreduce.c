/* allreduce: the collectives an MPI program starts with. Rank 0 broadcasts the problem's size
 * (msg_bcast), every rank contributes a vector and the sum lands on every rank
 * (msg_allreduce), the same again without blocking (msg_iallreduce on a completion queue),
 * the smallest and largest of one value per rank (MSG_MIN, MSG_MAX), a reduction of the
 * program's own (a greatest common divisor, registered with msg_reduction_create), and at the
 * end one more allreduce that tells rank 0 whether every rank found every result right.
 *
 *   cc -std=c99 allreduce.c -o allreduce $(pkg-config --cflags --libs libmsg)
 *   msgrun -n 4 ./allreduce */
#include <msg/msg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The vector's length, chosen by rank 0 and broadcast: 1,000 doubles are 8,000 bytes, an
 * eager message, and each rank's numbers are small integers, which doubles add exactly in any
 * order, so the results can be compared with ==. */
#define COUNT 1000

static int failed(int rank, const char *what, int rc) {
    if (rc == MSG_OK) return 0;
    fprintf(stderr, "allreduce: rank %d: %s: %s\n", rank, what, msg_strerror(rc));
    return 1;
}

/* Says what differs; returns 1 if it does. */
static int wrong(int rank, const char *what, long long got, long long expected) {
    if (got == expected) return 0;
    fprintf(stderr, "allreduce: rank %d: %s is %lld, expected %lld\n", rank, what, got, expected);
    return 1;
}

static uint64_t gcd(uint64_t a, uint64_t b) {
    while (b != 0) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* A reduction of the program's own: inout[i] = gcd(in[i], inout[i]). Ranks combine their
 * values in whatever order the collective's schedule takes, so it must be associative and
 * commutative, as gcd is. It runs inside libmsg (holding its lock) and must not call it. */
static void gcd_reduction(const void *in, void *inout, size_t count, void *arg) {
    const uint64_t *a = in;
    uint64_t *b = inout;
    (void)arg;
    for (size_t i = 0; i < count; ++i) b[i] = gcd(a[i], b[i]);
}

/* Rank r contributes (r + 1) * (i + 1) at index i: every rank must end with
 * (i + 1) * n(n + 1)/2 there. The blocking call and the nonblocking one each sum it once into
 * a buffer of their own. Returns -1 when a call fails (the program then leaves), 1 when a
 * result is wrong, 0 when both are right. */
static int vector_sums(msg_context_t *ctx, int rank, int size, size_t count, double *mine,
                       double *blocking, double *nonblocking) {
    msg_cq_t *cq;
    msg_completion_t c;
    for (size_t i = 0; i < count; ++i) mine[i] = (double)(rank + 1) * (double)(i + 1);
    if (failed(rank, "msg_allreduce",
               msg_allreduce(ctx, mine, blocking, count, MSG_DOUBLE, MSG_SUM)))
        return -1;
    /* The nonblocking form returns at once and ends as one completion on cq, op
     * MSG_OP_COLLECTIVE, with the cookie given here. Meanwhile the rank could compute; the
     * buffers must stay untouched until the completion has been taken. */
    if (failed(rank, "msg_cq_create", msg_cq_create(ctx, &cq)) ||
        failed(
            rank, "msg_iallreduce",
            msg_iallreduce(ctx, mine, nonblocking, count, MSG_DOUBLE, MSG_SUM, cq, nonblocking)) ||
        failed(rank, "msg_cq_wait", msg_cq_wait(cq, -1, &c)) ||
        failed(rank, "msg_iallreduce's completion", c.status) ||
        failed(rank, "msg_cq_destroy", msg_cq_destroy(cq)))
        return -1;
    if (c.op != MSG_OP_COLLECTIVE || c.cookie != nonblocking) {
        fprintf(stderr, "allreduce: rank %d: a completion of op %d, not the collective's\n", rank,
                c.op);
        return 1;
    }
    long long per_unit = (long long)size * (size + 1) / 2;
    for (size_t i = 0; i < count; ++i) {
        long long expected = (long long)(i + 1) * per_unit;
        if (wrong(rank, "an element of the blocking sum", (long long)blocking[i], expected) ||
            wrong(rank, "an element of the nonblocking sum", (long long)nonblocking[i], expected))
            return 1;
    }
    return 0;
}

/* The smallest and largest of one value per rank, then the gcd of 30 * (r + 2) over every
 * rank r, by the program's own reduction; rank 0 prints them. Returns as vector_sums does. */
static int scalars(msg_context_t *ctx, int rank, int size) {
    int64_t mine = rank + 1, least = 0, most = 0;
    uint64_t value = 30 * (uint64_t)(rank + 2), common = 0, expected = 0;
    int op;
    if (failed(rank, "msg_allreduce (MSG_MIN)",
               msg_allreduce(ctx, &mine, &least, 1, MSG_INT64, MSG_MIN)) ||
        failed(rank, "msg_allreduce (MSG_MAX)",
               msg_allreduce(ctx, &mine, &most, 1, MSG_INT64, MSG_MAX)))
        return -1;
    /* Every rank registers its reductions in the same order, so they get the same code. */
    if (failed(rank, "msg_reduction_create", msg_reduction_create(ctx, gcd_reduction, NULL, &op)) ||
        failed(rank, "msg_allreduce (gcd)",
               msg_allreduce(ctx, &value, &common, 1, MSG_UINT64, op)) ||
        failed(rank, "msg_reduction_free", msg_reduction_free(ctx, op)))
        return -1;
    for (int r = 0; r < size; ++r) expected = gcd(expected, 30 * (uint64_t)(r + 2));
    if (rank == 0) {
        printf("allreduce: min %lld, max %lld, gcd %llu\n", (long long)least, (long long)most,
               (unsigned long long)common);
    }
    return wrong(rank, "the minimum", least, 1) || wrong(rank, "the maximum", most, size) ||
           wrong(rank, "the gcd", (long long)common, (long long)expected);
}

int main(void) {
    msg_context_t *ctx;
    int rank = -1, size = 0;
    int64_t count = 0;

    if (failed(rank, "msg_init", msg_init(NULL, &ctx))) return 1;
    /* A failed call leaves without msg_finalize: the job counts this rank as failed, and the
     * other ranks' collectives end with MSG_ERR_PEER_FAILED instead of waiting for it. */
    if (failed(rank, "msg_rank", msg_rank(ctx, &rank)) ||
        failed(rank, "msg_size", msg_size(ctx, &size)))
        return 1;

    /* Every rank takes part in every collective, in the same order, with matching arguments:
     * rank 0 decides the vector's length and msg_bcast gives it to the others. */
    if (rank == 0) count = COUNT;
    if (failed(rank, "msg_bcast", msg_bcast(ctx, &count, sizeof count, 0))) return 1;
    double *buffers = malloc(3 * (size_t)count * sizeof *buffers);
    if (buffers == NULL) {
        fprintf(stderr, "allreduce: rank %d: no memory for %lld doubles\n", rank,
                3 * (long long)count);
        return 1;
    }
    if (rank == 0) {
        printf("allreduce: %d ranks, %lld doubles summed on every rank, blocking and not\n", size,
               (long long)count);
    }
    int vector =
        vector_sums(ctx, rank, size, (size_t)count, buffers, buffers + count, buffers + 2 * count);
    int scalar = vector < 0 ? -1 : scalars(ctx, rank, size);
    free(buffers);
    if (vector < 0 || scalar < 0) return 1;

    /* Did every rank find its results right? The minimum of the flags is 1 only if every
     * rank's is. A wrong result is no reason to leave the job abruptly: the rank still takes
     * part, and the job ends in order with a non-zero status. */
    int32_t ok = vector == 0 && scalar == 0, all_ok = 0;
    if (failed(rank, "msg_allreduce (MSG_MIN)",
               msg_allreduce(ctx, &ok, &all_ok, 1, MSG_INT32, MSG_MIN)))
        return 1;
    if (rank == 0) printf("allreduce: %s\n", all_ok ? "every rank checked every result" : "FAILED");

    if (failed(rank, "msg_finalize", msg_finalize(ctx))) return 1;
    msg_destroy(ctx);
    return all_ok ? 0 : 1;
}
