/* hello: the smallest complete libmsg program. Every rank joins the job and says who it is,
 * then a token goes once around the ranks with blocking sends and receives.
 *
 *   cc -std=c99 hello.c -o hello $(pkg-config --cflags --libs libmsg)
 *   msgrun -n 4 ./hello        (or ./hello alone: a job of one) */
#include <msg/msg.h>
#include <stdio.h>

/* Application tags are any value in [0, MSG_TAG_USER_MAX]; the range above is libmsg's own. */
#define TAG_TOKEN 1

/* Every libmsg call returns MSG_OK (0) or a negative status, which msg_strerror names.
 * Returns nonzero (and says why) when rc is an error. */
static int failed(int rank, const char *what, int rc) {
    if (rc == MSG_OK) return 0;
    fprintf(stderr, "hello: rank %d: %s: %s\n", rank, what, msg_strerror(rc));
    return 1;
}

/* Rank 0 starts the token at 1; every other rank receives it from its left neighbour, adds
 * one for itself and passes it on to the right; back at rank 0 it has counted every rank.
 * In a job of one, rank 0 sends to itself: a message this small is delivered at once, so
 * the send returns before the receive is posted. */
static int pass_token(msg_context_t *ctx, int rank, int size, int *token) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    msg_completion_t c;
    *token = 1;
    if (rank == 0 && failed(rank, "msg_send", msg_send(ctx, next, TAG_TOKEN, token, sizeof *token)))
        return 1;
    if (failed(rank, "msg_recv", msg_recv(ctx, prev, TAG_TOKEN, token, sizeof *token, &c)))
        return 1;
    /* The completion says who sent how much. */
    if (c.source != prev || c.bytes != sizeof *token) {
        fprintf(stderr, "hello: rank %d: got %zu bytes from rank %d, expected %zu from %d\n", rank,
                c.bytes, c.source, sizeof *token, prev);
        return 1;
    }
    if (rank == 0) return 0;
    *token += 1;
    return failed(rank, "msg_send", msg_send(ctx, next, TAG_TOKEN, token, sizeof *token));
}

int main(void) {
    msg_context_t *ctx;
    msg_info_t info;
    int rank = -1, size = 0, token = 0;

    /* NULL: the defaults, overridden by any VIADUCT_* variable. msg_init returns once every
     * rank of the job has joined and every peer is connected. */
    if (failed(rank, "msg_init", msg_init(NULL, &ctx))) return 1;
    /* On an error from here on the program leaves without msg_finalize: the job then counts
     * this rank as failed, and the other ranks' calls that wait on it return
     * MSG_ERR_PEER_FAILED instead of waiting for ever. */
    if (failed(rank, "msg_rank", msg_rank(ctx, &rank)) ||
        failed(rank, "msg_size", msg_size(ctx, &size)) ||
        failed(rank, "msg_get_info", msg_get_info(ctx, &info)))
        return 1;
    printf("hello from rank %d of %d\n", rank, size);

    if (pass_token(ctx, rank, size, &token) != 0) return 1;
    if (rank == 0 && token != size) {
        fprintf(stderr, "hello: the token came back as %d, expected %d\n", token, size);
        return 1;
    }
    if (rank == 0) {
        printf("hello: the token visited all %d ranks over provider %s\n", size, info.provider);
    }

    /* msg_finalize waits for this rank's sends to finish and for every other rank to reach
     * msg_finalize; msg_destroy then frees the handle. */
    if (failed(rank, "msg_finalize", msg_finalize(ctx))) return 1;
    msg_destroy(ctx);
    return 0;
}
