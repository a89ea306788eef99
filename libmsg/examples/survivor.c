/* survivor: a job that outlives one of its ranks. The last rank fails on purpose, killed by
 * SIGKILL (or, with the argument `exit`, leaving with status 3 without msg_finalize, which
 * the job counts the same way). Every other rank is waiting to receive from it; that receive
 * ends with MSG_ERR_PEER_FAILED, each survivor reports it, checks that collectives are now
 * refused, adds up the survivors' values with point-to-point messages, which still work, and
 * finalizes in order.
 *
 *   cc -std=c99 survivor.c -o survivor $(pkg-config --cflags --libs libmsg)
 *   msgrun -n 4 ./survivor        (exit status 137: the failed rank's)
 *   msgrun -n 4 ./survivor exit   (exit status 3)
 *
 * msgrun's exit status is the first failing rank's (128 + N for a rank killed by signal N,
 * so 137 for SIGKILL), even though every survivor exits 0: the job as a whole did not succeed,
 * and a script running it must see that. msgrun also names the rank on its standard error
 * ("msgrun: rank 3 killed by SIGKILL"). After a failure the survivors have --failure-grace
 * seconds (by default twice VIADUCT_TIMEOUT_MS plus 5 s) to end by themselves before msgrun
 * stops them; these end at once. Only msgrun keeps survivors running: srun --mpi=pmix and
 * mpirun kill the whole job when a rank dies (docs/libmsg-guide.md, the launcher table). */
#define _POSIX_C_SOURCE 200809L /* SIGKILL and _exit under -std=c99 */
#include <msg/msg.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TAG_REPORT 1 /* the message the failed rank never sends */
#define TAG_PART 2   /* a survivor's value, to rank 0 */

static int failed(int rank, const char *what, int rc) {
    if (rc == MSG_OK) return 0;
    fprintf(stderr, "survivor: rank %d: %s: %s\n", rank, what, msg_strerror(rc));
    return 1;
}

/* Returns 1 (and says so) unless rc is `expected`. */
static int not_as_expected(int rank, const char *what, int rc, int expected) {
    if (rc == expected) return 0;
    fprintf(stderr, "survivor: rank %d: %s returned '%s', expected '%s'\n", rank, what,
            msg_strerror(rc), msg_strerror(expected));
    return 1;
}

/* The failure itself: no msg_finalize, no word to anyone. The job's coordinator sees the
 * process end and tells every other rank. */
static void fail_on_purpose(int rank, int by_exit) {
    printf("survivor: rank %d fails on purpose (%s)\n", rank,
           by_exit ? "exit status 3 without msg_finalize" : "SIGKILL");
    fflush(stdout); /* nothing buffered is written by a killed process */
    if (by_exit) _exit(3);
    raise(SIGKILL);
}

/* What a survivor does: learn of the failure from an operation involving the failed rank,
 * see the collectives refused, and add up the survivors' values (rank r's is r + 1) at rank 0
 * with messages among the survivors. */
static int survive(msg_context_t *ctx, int rank, int failed_rank) {
    int report = 0, sum = 0;
    msg_completion_t c;
    /* Blocks until rank failed_rank sends, or until the job says it failed: MSG_ERR_PEER_FAILED
     * as soon as the coordinator has told this rank, not after a timeout. */
    int rc = msg_recv(ctx, failed_rank, TAG_REPORT, &report, sizeof report, &c);
    if (not_as_expected(rank, "msg_recv from the failing rank", rc, MSG_ERR_PEER_FAILED)) return 1;
    printf("survivor: rank %d: the receive from rank %d ended with '%s'\n", rank, failed_rank,
           msg_strerror(rc));
    /* Every collective runs over every rank of the context: once a rank has failed, they are
     * refused at once (and any still open would end with MSG_ERR_PEER_FAILED). */
    rc = msg_allreduce(ctx, &report, &sum, 1, MSG_INT32, MSG_SUM);
    if (not_as_expected(rank, "msg_allreduce after the failure", rc, MSG_ERR_PEER_FAILED)) return 1;
    /* Messages between survivors go on as before. */
    int mine = rank + 1;
    if (rank != 0) return failed(rank, "msg_send", msg_send(ctx, 0, TAG_PART, &mine, sizeof mine));
    sum = mine;
    for (int r = 1; r < failed_rank; ++r) {
        int part = 0;
        if (failed(rank, "msg_recv", msg_recv(ctx, r, TAG_PART, &part, sizeof part, &c))) return 1;
        sum += part;
    }
    printf("survivor: rank %d failed; ranks 0 to %d carried on, their sum %d\n", failed_rank,
           failed_rank - 1, sum);
    if (sum != failed_rank * (failed_rank + 1) / 2) {
        fprintf(stderr, "survivor: the survivors' sum is %d, expected %d\n", sum,
                failed_rank * (failed_rank + 1) / 2);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    msg_context_t *ctx;
    int rank = -1, size = 0;
    int by_exit = argc > 1 && strcmp(argv[1], "exit") == 0;

    if (argc > 2 || (argc == 2 && !by_exit && strcmp(argv[1], "kill") != 0)) {
        fprintf(stderr, "usage: survivor [kill|exit]\n");
        return 2;
    }
    if (failed(rank, "msg_init", msg_init(NULL, &ctx))) return 1;
    if (failed(rank, "msg_rank", msg_rank(ctx, &rank)) ||
        failed(rank, "msg_size", msg_size(ctx, &size)))
        return 1;
    if (size < 2) {
        fprintf(stderr, "survivor: needs a job of at least 2 ranks (msgrun -n 3 ./survivor)\n");
        msg_finalize(ctx);
        msg_destroy(ctx);
        return 2;
    }

    /* Every rank gets here before the last one fails, so it fails while no message is moving.
     * (On libfabric 1.17's shm provider a rank killed in the middle of a transfer can leave a
     * survivor's next call stuck in the provider; over tcp survivors carry on either way.) */
    if (failed(rank, "msg_barrier", msg_barrier(ctx))) return 1;
    if (rank == size - 1) fail_on_purpose(rank, by_exit);
    if (survive(ctx, rank, size - 1) != 0) return 1;

    /* msg_finalize does not wait for the failed rank: it returns once every live rank has
     * reached it, MSG_OK, or MSG_ERR_PEER_FAILED if a rank failed while it waited. Either way
     * the survivors meet and leave in order. */
    int rc = msg_finalize(ctx);
    if (rc != MSG_ERR_PEER_FAILED && failed(rank, "msg_finalize", rc)) return 1;
    msg_destroy(ctx);
    return 0;
}
