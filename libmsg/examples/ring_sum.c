/* ring_sum: a sum over every rank, passed around the ring with nonblocking sends and receives
 * whose completions arrive on a completion queue. Rank r contributes r + 1, so every rank
 * must end with n(n+1)/2 for a job of n ranks.
 *
 *   cc -std=c99 ring_sum.c -o ring_sum $(pkg-config --cflags --libs libmsg)
 *   msgrun -n 4 ./ring_sum */
#include <msg/msg.h>
#include <stdio.h>

/* Each step of the ring has a tag of its own, so a value can never be taken for the one of
 * another step, whatever order the messages arrive in. */
#define TAG_FIRST_STEP 100

/* How long one wait may take. A peer that exits or is killed ends the wait at once with
 * MSG_ERR_PEER_FAILED; this only bounds a peer that is alive but never sends. */
#define WAIT_MS 60000

static int failed(int rank, const char *what, int rc) {
    if (rc == MSG_OK) return 0;
    fprintf(stderr, "ring_sum: rank %d: %s: %s\n", rank, what, msg_strerror(rc));
    return 1;
}

/* One step: send `outgoing` to the right and receive `incoming` from the left, both at once.
 * With blocking calls every rank would send first, and the send of a long message waits for
 * a receive that nobody has posted yet; posting both and then waiting for both cannot
 * deadlock, whatever the size of the message. Each operation carries its own buffer's
 * address as its cookie, which tells the two completions apart. */
static int ring_step(msg_context_t *ctx, msg_cq_t *cq, int rank, int size, int step,
                     long long *outgoing, long long *incoming) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int tag = TAG_FIRST_STEP + step;
    msg_completion_t c;
    if (failed(rank, "msg_irecv",
               msg_irecv(ctx, prev, tag, incoming, sizeof *incoming, cq, incoming)) ||
        failed(rank, "msg_isend",
               msg_isend(ctx, next, tag, outgoing, sizeof *outgoing, cq, outgoing)))
        return 1;
    for (int pending = 2; pending > 0; --pending) {
        /* msg_cq_wait's own status says whether a completion came; the completion's status
         * says whether that operation succeeded. Both need checking. */
        if (failed(rank, "msg_cq_wait", msg_cq_wait(cq, WAIT_MS, &c))) return 1;
        if (failed(rank, c.op == MSG_OP_SEND ? "send" : "receive", c.status)) return 1;
        if (c.cookie == incoming && (c.source != prev || c.bytes != sizeof *incoming)) {
            fprintf(stderr, "ring_sum: rank %d: got %zu bytes from rank %d, expected %zu from %d\n",
                    rank, c.bytes, c.source, sizeof *incoming, prev);
            return 1;
        }
    }
    return 0;
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

    /* Step s passes on what arrived at step s - 1 (at first, the rank's own value): after
     * size - 1 steps every rank has seen each other rank's value exactly once. The value
     * being sent is not touched until its send has completed. */
    long long mine = rank + 1, sum = mine, outgoing = mine, incoming = 0;
    for (int step = 0; step < size - 1; ++step) {
        if (ring_step(ctx, cq, rank, size, step, &outgoing, &incoming) != 0) return 1;
        sum += incoming;
        outgoing = incoming;
    }

    long long expected = (long long)size * (size + 1) / 2;
    if (rank == 0) printf("ring_sum: %d ranks, sum %lld\n", size, sum);
    if (sum != expected) {
        fprintf(stderr, "ring_sum: rank %d: sum %lld, expected %lld\n", rank, sum, expected);
    }

    /* Every operation has completed, so the queue can go (msg_cq_destroy refuses with
     * MSG_ERR_BUSY while operations bound to it are in flight); the communication itself
     * worked, so the rank leaves in order even when the sum is wrong. */
    if (failed(rank, "msg_cq_destroy", msg_cq_destroy(cq)) ||
        failed(rank, "msg_finalize", msg_finalize(ctx)))
        return 1;
    msg_destroy(ctx);
    return sum == expected ? 0 : 1;
}
