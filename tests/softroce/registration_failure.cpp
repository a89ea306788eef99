// Two ranks: sends from memory that cannot be registered (unmapped) fail
// with MSG_ERR_TRANSPORT, without a hang, an abort or harm to the
// connection, and long messages from one buffer, sent again and again, still
// arrive intact (the registration cache serves them). Run with msgrun.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "msg/msg.h"

namespace {

int failures = 0;
int rank = -1;

void expect(bool ok, const char *what, int status) {
    if (ok) return;
    std::printf("[rank %d] FAIL %s: status %d (%s)\n", rank, what, status, msg_strerror(status));
    ++failures;
}

}  // namespace

int main() {
    msg_context_t *ctx = nullptr;
    int rc = msg_init(nullptr, &ctx);
    if (rc != MSG_OK) {
        std::printf("FAIL msg_init: %s\n", msg_strerror(rc));
        return 1;
    }
    msg_rank(ctx, &rank);
    constexpr size_t kLong = 1 << 20;
    constexpr int kRounds = 6;
    std::vector<unsigned char> buf(kLong);
    if (rank == 0) {
        // An address range that was mapped and is no more: nothing there to pin.
        void *bad = mmap(nullptr, kLong, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(bad, kLong);
        rc = msg_send(ctx, 1, 1, bad, kLong);
        expect(rc == MSG_ERR_TRANSPORT, "long send from unmapped memory", rc);
        rc = msg_send(ctx, 1, 1, bad, 100);
        expect(rc == MSG_ERR_TRANSPORT, "eager send from unmapped memory", rc);
        for (int round = 0; round < kRounds; ++round) {
            for (size_t i = 0; i < kLong; ++i) buf[i] = static_cast<unsigned char>(i * 7 + round);
            rc = msg_send(ctx, 1, 2, buf.data(), kLong);
            expect(rc == MSG_OK, "long send after the failures", rc);
        }
    } else if (rank == 1) {
        for (int round = 0; round < kRounds; ++round) {
            msg_completion_t c{};
            rc = msg_recv(ctx, 0, MSG_ANY_TAG, buf.data(), kLong, &c);
            expect(rc == MSG_OK && c.tag == 2 && c.bytes == kLong, "receive", rc);
            size_t bad = 0;
            for (size_t i = 0; i < kLong; ++i)
                if (buf[i] != static_cast<unsigned char>(i * 7 + round)) ++bad;
            if (bad != 0) {
                std::printf("[rank 1] FAIL round %d: %zu bytes differ\n", round, bad);
                ++failures;
            }
        }
    }
    rc = msg_finalize(ctx);
    expect(rc == MSG_OK, "msg_finalize", rc);
    msg_destroy(ctx);
    if (failures == 0) std::printf("[rank %d] PASS registration_failure\n", rank);
    return failures == 0 ? 0 : 1;
}
