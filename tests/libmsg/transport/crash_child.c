/* A plain C program linked with libmsg: joins a job of one, says "ready",
 * then crashes the way argv[1] names (segv, abort, bus) or waits to be
 * killed (wait). Its parent checks how it died. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "msg/msg.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s segv|abort|bus|wait\n", argv[0]);
        return 2;
    }
    /* A core file would only litter the directory the parent inspects. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    msg_context_t *ctx = NULL;
    int rc = msg_init(NULL, &ctx);
    if (rc != MSG_OK) {
        fprintf(stderr, "msg_init: %s\n", msg_strerror(rc));
        return 3;
    }
    printf("ready\n");
    fflush(stdout);
    if (strcmp(argv[1], "segv") == 0) raise(SIGSEGV);
    if (strcmp(argv[1], "abort") == 0) abort();
    if (strcmp(argv[1], "bus") == 0) raise(SIGBUS);
    if (strcmp(argv[1], "wait") == 0)
        for (;;) pause();
    /* Still alive: the signal was caught and survived. */
    msg_destroy(ctx);
    return 4;
}
