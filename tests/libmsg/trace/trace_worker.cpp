// A rank for the message trace test: rank 0 sends every other rank kEager eager and kLong
// long messages from two threads at once; each other rank receives them (half by wildcard)
// and answers with one eager message. The driver checks the trace files against this plan.
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "msg/msg.h"

namespace {

constexpr int kEager = 6;  // per peer, 100 bytes each
constexpr int kLong = 2;   // per peer, 300 KiB each
constexpr size_t kEagerBytes = 100;
constexpr size_t kLongBytes = 300 * 1024;

int fail(const char *what, int rc) {
    std::fprintf(stderr, "trace_worker: %s: %s\n", what, msg_strerror(rc));
    return 1;
}

// One of rank 0's two sending threads: the eager messages (first) or the long ones.
int send_all(msg_context_t *ctx, int size, bool long_ones) {
    std::vector<char> buf(kLongBytes, 'x');
    for (int peer = 1; peer < size; ++peer)
        for (int i = 0; i < (long_ones ? kLong : kEager); ++i) {
            int rc = msg_send(ctx, peer, long_ones ? 2 : 1, buf.data(),
                              long_ones ? kLongBytes : kEagerBytes);
            if (rc != MSG_OK) return fail("send", rc);
        }
    return 0;
}

int rank_zero(msg_context_t *ctx, int size) {
    int r1 = 0, r2 = 0;
    std::thread eager([&] { r1 = send_all(ctx, size, false); });
    std::thread lng([&] { r2 = send_all(ctx, size, true); });
    eager.join();
    lng.join();
    char reply[16];
    for (int i = 1; i < size; ++i) {
        int rc = msg_recv(ctx, MSG_ANY_SOURCE, 3, reply, sizeof reply, nullptr);
        if (rc != MSG_OK) return fail("recv reply", rc);
    }
    return r1 | r2;
}

int other_rank(msg_context_t *ctx) {
    std::vector<char> buf(kLongBytes);
    for (int i = 0; i < kEager + kLong; ++i) {
        const int tag = i < kEager ? 1 : 2;
        int rc = msg_recv(ctx, i % 2 ? MSG_ANY_SOURCE : 0, tag, buf.data(), buf.size(), nullptr);
        if (rc != MSG_OK) return fail("recv", rc);
    }
    const char reply[8] = "done";
    int rc = msg_send(ctx, 0, 3, reply, sizeof reply);
    return rc == MSG_OK ? 0 : fail("send reply", rc);
}

}  // namespace

int main() {
    msg_context_t *ctx = nullptr;
    int rc = msg_init(nullptr, &ctx);
    if (rc != MSG_OK) return fail("msg_init", rc);
    int rank = 0, size = 0;
    msg_rank(ctx, &rank);
    msg_size(ctx, &size);
    int result = rank == 0 ? rank_zero(ctx, size) : other_rank(ctx);
    rc = msg_finalize(ctx);
    msg_destroy(ctx);
    if (rc != MSG_OK) return fail("msg_finalize", rc);
    return result;
}
