/* A rank for launcher_test.py: sleeps SETUP_MS before msg_init (a program that sets up first),
 * says it joined and whether its waits yield the CPU, then ends with msg_finalize (exit 0
 * whatever it returns), or, where RANK is its rank, exits 0 without it.
 * usage: join_rank SETUP_MS [RANK_WITHOUT_FINALIZE] */
#define _POSIX_C_SOURCE 200809L
#include <msg/msg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const long setup_ms = atol(argv[1]);
    const int no_finalize = argc > 2 ? atoi(argv[2]) : -1;
    struct timespec t = {setup_ms / 1000, (setup_ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
    msg_context_t *ctx = NULL;
    int rc = msg_init(NULL, &ctx);
    if (rc != MSG_OK) {
        fprintf(stderr, "join_rank: msg_init: %s\n", msg_strerror(rc));
        return 1;
    }
    int rank = -1;
    msg_rank(ctx, &rank);
    msg_info_t info;
    if (msg_get_info(ctx, &info) != MSG_OK) return 1;
    if (msg_barrier(ctx) != MSG_OK) return 1;
    printf("rank %d joined, yield %d\n", rank, info.spin_yield);
    fflush(stdout);
    if (rank == no_finalize) exit(0);
    /* Exits 0 whatever msg_finalize says (a peer that left without it makes it fail), so
     * that msgrun's own judgment of the job is what the test sees. */
    rc = msg_finalize(ctx);
    printf("rank %d finalize: %s\n", rank, msg_strerror(rc));
    msg_destroy(ctx);
    return 0;
}
