// Joins a job with whatever VIADUCT_TRANSPORT says and passes when msg_init
// returns one of the statuses given as arguments within 20 s: a bad name is
// a configuration error, and verbs on a host without an RDMA device is a
// transport error at once, never a hang or an abort. Run with msgrun.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "msg/msg.h"

int main(int argc, char **argv) {
    auto t0 = std::chrono::steady_clock::now();
    msg_context_t *ctx = nullptr;
    int rc = msg_init(nullptr, &ctx);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (ctx != nullptr) msg_destroy(ctx);
    bool expected = false;
    for (int i = 1; i < argc; ++i) expected = expected || rc == std::atoi(argv[i]);
    if (expected && s < 20.0) {
        std::printf("PASS transport_select: msg_init returned %d (%s) in %.2f s\n", rc,
                    msg_strerror(rc), s);
        return 0;
    }
    std::printf("FAIL transport_select: msg_init returned %d (%s) in %.2f s\n", rc,
                msg_strerror(rc), s);
    return 1;
}
