/* halo: a 1-D halo exchange. A line of NPOINTS values is cut into one slice per rank; in each
 * iteration every rank swaps its edge values with its left and right neighbours, then applies
 * a 3-point stencil. The line's ends are not periodic: beyond them the value is a fixed 0.
 * Every rank checks its slice against the whole line computed serially.
 *
 *   cc -std=c99 halo.c -o halo $(pkg-config --cflags --libs libmsg)
 *   msgrun -n 4 ./halo */
#include <msg/msg.h>
#include <stdio.h>

#define NPOINTS 1000
#define ITERATIONS 50
/* An edge value travelling to the left or to the right neighbour, in iteration i, has tag
 * TAG_HALO + 2 * i + direction: a neighbour one iteration ahead can never be mistaken for the
 * current one. */
#define TAG_HALO 1000
#define TO_LEFT 0
#define TO_RIGHT 1
/* Each rank's result, gathered at rank 0 at the end. */
#define TAG_RESULT 999
/* A peer that exits or is killed ends a wait at once (MSG_ERR_PEER_FAILED); this only bounds
 * one that is alive but never sends. */
#define WAIT_MS 60000
/* Both computations do the same arithmetic in the same order, so they agree to the last bit;
 * the margin only allows a compiler that fuses a multiply and an add at one call site and
 * not at the other. */
#define TOLERANCE 1e-12

/* u[0] and u[n + 1] are the halo: the neighbours' edge values, or the fixed 0 at the ends. */
static double line[2][NPOINTS + 2], slice[2][NPOINTS + 2];

static int failed(int rank, const char *what, int rc) {
    if (rc == MSG_OK) return 0;
    fprintf(stderr, "halo: rank %d: %s: %s\n", rank, what, msg_strerror(rc));
    return 1;
}

/* Any values will do; these jump about, which gives the stencil something to smooth. */
static double initial(int i) {
    return (double)((i * 37) % 101);
}

static double larger(double a, double b) {
    return a > b ? a : b;
}

/* |a - b|, relative to |b| when that is above 1. */
static double difference(double a, double b) {
    double d = a > b ? a - b : b - a;
    return d / larger(1.0, b > 0 ? b : -b);
}

static void stencil(const double *u, double *out, int n) {
    for (int i = 1; i <= n; ++i) out[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
}

/* The whole line, on one rank, with no messages: what every slice must come to. */
static const double *serial_line(void) {
    int cur = 0;
    for (int i = 0; i < NPOINTS; ++i) line[0][i + 1] = initial(i);
    for (int it = 0; it < ITERATIONS; ++it, cur = !cur) stencil(line[cur], line[!cur], NPOINTS);
    return line[cur];
}

/* Posts the swap of edge values with one neighbour: its edge value into *halo, ours from *edge.
 * Nonblocking, so that every rank can post both sides at once and nobody waits for a receive
 * that its peer has not posted yet. */
static int post_swap(msg_context_t *ctx, msg_cq_t *cq, int peer, int tag_in, int tag_out,
                     double *halo, double *edge) {
    int rc = msg_irecv(ctx, peer, tag_in, halo, sizeof *halo, cq, NULL);
    return rc == MSG_OK ? msg_isend(ctx, peer, tag_out, edge, sizeof *edge, cq, NULL) : rc;
}

/* Fills u's halo for iteration `it`: u[0] from the left neighbour, u[n + 1] from the right
 * one; the ranks at the ends keep the fixed 0 on their open side. */
static int exchange_halos(msg_context_t *ctx, msg_cq_t *cq, int rank, int size, int it, double *u,
                          int n) {
    int to_left = TAG_HALO + 2 * it + TO_LEFT, to_right = TAG_HALO + 2 * it + TO_RIGHT;
    int pending = 0;
    msg_completion_t c;
    if (rank > 0) {
        if (failed(rank, "msg_irecv/msg_isend",
                   post_swap(ctx, cq, rank - 1, to_right, to_left, &u[0], &u[1])))
            return 1;
        pending += 2;
    }
    if (rank < size - 1) {
        if (failed(rank, "msg_irecv/msg_isend",
                   post_swap(ctx, cq, rank + 1, to_left, to_right, &u[n + 1], &u[n])))
            return 1;
        pending += 2;
    }
    for (; pending > 0; --pending) {
        /* msg_cq_wait's status says whether a completion came; the completion's status
         * whether its operation succeeded. */
        if (failed(rank, "msg_cq_wait", msg_cq_wait(cq, WAIT_MS, &c)) ||
            failed(rank, c.op == MSG_OP_SEND ? "send" : "receive", c.status))
            return 1;
        if (c.op == MSG_OP_RECV && c.bytes != sizeof *u) {
            fprintf(stderr, "halo: rank %d: %zu bytes from rank %d\n", rank, c.bytes, c.source);
            return 1;
        }
    }
    return 0;
}

/* This rank's slice, [first, first + n) of the line, after ITERATIONS exchanges and steps. */
static const double *run_slice(msg_context_t *ctx, msg_cq_t *cq, int rank, int size, int first,
                               int n) {
    int cur = 0;
    for (int i = 0; i < n; ++i) slice[0][i + 1] = initial(first + i);
    for (int it = 0; it < ITERATIONS; ++it, cur = !cur) {
        if (exchange_halos(ctx, cq, rank, size, it, slice[cur], n) != 0) return NULL;
        stencil(slice[cur], slice[!cur], n);
    }
    return slice[cur];
}

/* Rank 0 gathers every rank's {largest difference, sum of its slice} and prints the whole
 * job's; returns the job's largest difference (rank 0) or this rank's (others), or -1. */
static double report(msg_context_t *ctx, int rank, int size, double diff, double sum) {
    double mine[2] = {diff, sum}, theirs[2];
    msg_completion_t c;
    if (rank != 0) {
        if (failed(rank, "msg_send", msg_send(ctx, 0, TAG_RESULT, mine, sizeof mine))) return -1;
        return diff;
    }
    for (int r = 1; r < size; ++r) {
        if (failed(rank, "msg_recv", msg_recv(ctx, r, TAG_RESULT, theirs, sizeof theirs, &c)))
            return -1;
        diff = larger(diff, theirs[0]);
        sum += theirs[1];
    }
    printf("halo: %d ranks, %d points, %d iterations, checksum %.15g, largest difference %g\n",
           size, NPOINTS, ITERATIONS, sum, diff);
    return diff;
}

int main(void) {
    msg_context_t *ctx;
    msg_cq_t *cq;
    int rank = -1, size = 0;

    if (failed(rank, "msg_init", msg_init(NULL, &ctx))) return 1;
    /* After an error the program leaves without msg_finalize: the job counts this rank as
     * failed, and the peers' operations involving it end with MSG_ERR_PEER_FAILED. */
    if (failed(rank, "msg_rank", msg_rank(ctx, &rank)) ||
        failed(rank, "msg_size", msg_size(ctx, &size)) ||
        failed(rank, "msg_cq_create", msg_cq_create(ctx, &cq)))
        return 1;
    if (size > NPOINTS) {
        fprintf(stderr, "halo: %d ranks for %d points: at most one rank a point\n", size, NPOINTS);
        return 1;
    }
    int first = (int)((long)rank * NPOINTS / size);
    int n = (int)((long)(rank + 1) * NPOINTS / size) - first;

    const double *mine = run_slice(ctx, cq, rank, size, first, n);
    if (mine == NULL) return 1;
    const double *expected = serial_line();
    double diff = 0, sum = 0;
    for (int i = 1; i <= n; ++i) {
        diff = larger(diff, difference(mine[i], expected[first + i]));
        sum += mine[i];
    }
    if ((diff = report(ctx, rank, size, diff, sum)) < 0) return 1;
    if (diff > TOLERANCE) fprintf(stderr, "halo: rank %d: differs from the serial result\n", rank);

    if (failed(rank, "msg_cq_destroy", msg_cq_destroy(cq)) ||
        failed(rank, "msg_finalize", msg_finalize(ctx)))
        return 1;
    msg_destroy(ctx);
    return diff > TOLERANCE ? 1 : 0;
}
