// A rank for the stranger test: joins its job, says where its coordinator is,
// waits until the driver's gate file appears, then checks a ring exchange and
// a barrier. Run without the job key it must fail to join, naming why.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "msg/msg.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: libmsg_stranger_worker GATE_FILE\n");
        return 2;
    }
    msg_context_t *ctx = nullptr;
    int rc = msg_init(nullptr, &ctx);
    if (rc != MSG_OK) {
        std::printf("[stranger] FAIL msg_init: %s\n", msg_strerror(rc));
        return 1;
    }
    int rank = 0, size = 0;
    msg_rank(ctx, &rank);
    msg_size(ctx, &size);
    const char *coord = std::getenv("VIADUCT_COORDINATOR");
    std::printf("[rank %d] joined, coordinator %s\n", rank, coord != nullptr ? coord : "none");
    std::fflush(stdout);

    // The driver lets strangers knock while every rank waits here.
    struct stat st {};
    while (::stat(argv[1], &st) != 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));

    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    const int mine = rank * 7 + 1;
    int got = -1;
    msg_completion_t c{};
    rc = msg_send(ctx, next, 5, &mine, sizeof mine);
    if (rc == MSG_OK) rc = msg_recv(ctx, prev, 5, &got, sizeof got, &c);
    if (rc == MSG_OK) rc = msg_barrier(ctx);
    bool ok = rc == MSG_OK && c.bytes == sizeof got && c.source == prev && got == prev * 7 + 1;
    if (ok)
        std::printf("[rank %d] PASS stranger\n", rank);
    else
        std::printf("[rank %d] FAIL exchange: %s, got %d from rank %d\n", rank, msg_strerror(rc),
                    got, prev);
    std::fflush(stdout);
    msg_finalize(ctx);
    msg_destroy(ctx);
    return ok ? 0 : 1;
}
