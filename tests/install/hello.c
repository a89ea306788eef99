/* A C program built against an installed libmsg: the version it was compiled with and the
 * one it loaded agree, the job starts, and with two or more ranks each rank passes a
 * message to the next one around a ring. Prints one line per rank. */
#include <msg/msg.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, int rc) {
    fprintf(stderr, "hello-c: %s: %s\n", what, msg_strerror(rc));
    return 1;
}

static int ring(msg_context_t *ctx, int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1, rc;
    msg_completion_t c;
    if (rank == 0 && (rc = msg_send(ctx, next, 7, &rank, sizeof rank)) != MSG_OK) {
        return fail("msg_send", rc);
    }
    if ((rc = msg_recv(ctx, prev, 7, &got, sizeof got, &c)) != MSG_OK) {
        return fail("msg_recv", rc);
    }
    if (got != prev || c.source != prev || c.bytes != sizeof got) {
        fprintf(stderr, "hello-c: rank %d got %d from %d, expected %d\n", rank, got, c.source,
                prev);
        return 1;
    }
    if (rank != 0 && (rc = msg_send(ctx, next, 7, &rank, sizeof rank)) != MSG_OK) {
        return fail("msg_send", rc);
    }
    return 0;
}

int main(void) {
    int major, minor, patch, rank, size, rc;
    if ((rc = msg_get_version(&major, &minor, &patch)) != MSG_OK) {
        return fail("msg_get_version", rc);
    }
    if (major != MSG_VERSION_MAJOR || minor != MSG_VERSION_MINOR || patch != MSG_VERSION_PATCH) {
        fprintf(stderr, "hello-c: loaded libmsg %d.%d.%d, compiled against %d.%d.%d\n", major,
                minor, patch, MSG_VERSION_MAJOR, MSG_VERSION_MINOR, MSG_VERSION_PATCH);
        return 1;
    }
    msg_context_t *ctx;
    if ((rc = msg_init(NULL, &ctx)) != MSG_OK) {
        return fail("msg_init", rc);
    }
    msg_rank(ctx, &rank);
    msg_size(ctx, &size);
    if (size > 1 && ring(ctx, rank, size) != 0) {
        return 1;
    }
    if ((rc = msg_barrier(ctx)) != MSG_OK || (rc = msg_finalize(ctx)) != MSG_OK) {
        return fail("msg_barrier/msg_finalize", rc);
    }
    printf("hello-c rank %d of %d libmsg %d.%d.%d\n", rank, size, major, minor, patch);
    return 0;
}
