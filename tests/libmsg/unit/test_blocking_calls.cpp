// Blocking calls (msg_send, msg_recv, the blocking collectives) wait on a private CQ that the
// context keeps for the next such call: many threads calling at once each get their own and
// their own data, a call that fails leaves nothing behind for the next, and after
// msg_finalize the kept ones serve no call.
#include <msg/msg.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <thread>
#include <vector>

#include "local_job.hpp"

TEST_CASE("threads making blocking calls at once each get their own data", "[blocking]") {
    unit::LocalJob job;
    constexpr int kThreads = 6;
    constexpr int kRounds = 400;
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kRounds; ++i) {
                const uint64_t out = (uint64_t(t) << 32) | uint64_t(i);
                uint64_t in = 0;
                msg_completion_t c{};
                // A message to ourselves on a tag of this thread's own, then its receive.
                if (msg_send(job.ctx(), 0, 100 + t, &out, sizeof out) != MSG_OK ||
                    msg_recv(job.ctx(), 0, 100 + t, &in, sizeof in, &c) != MSG_OK) {
                    ++failed;
                    continue;
                }
                if (in != out || c.bytes != sizeof in || c.tag != 100 + t) ++wrong;
                double v = t + 1, sum = 0;
                if (msg_allreduce(job.ctx(), &v, &sum, 1, MSG_DOUBLE, MSG_SUM) != MSG_OK)
                    ++failed;
                else if (sum != v)
                    ++wrong;
            }
        });
    }
    for (auto &th : threads) th.join();
    CHECK(failed == 0);
    CHECK(wrong == 0);
}

TEST_CASE("a blocking call that fails leaves the next one unharmed", "[blocking]") {
    unit::LocalJob job;
    char byte = 'x';
    for (int i = 0; i < 20; ++i) {
        CHECK(msg_send(job.ctx(), 5, 1, &byte, 1) == MSG_ERR_UNKNOWN_RANK);
        char got = 0;
        REQUIRE(msg_send(job.ctx(), 0, 2, &byte, 1) == MSG_OK);
        REQUIRE(msg_recv(job.ctx(), 0, 2, &got, 1, nullptr) == MSG_OK);
        CHECK(got == 'x');
    }
}

TEST_CASE("after msg_finalize no blocking call is served", "[blocking]") {
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(nullptr, &ctx) == MSG_OK);
    char byte = 'y', got = 0;
    for (int i = 0; i < 3; ++i) {  // leaves kept CQs behind
        REQUIRE(msg_send(ctx, 0, 3, &byte, 1) == MSG_OK);
        REQUIRE(msg_recv(ctx, 0, 3, &got, 1, nullptr) == MSG_OK);
    }
    REQUIRE(msg_finalize(ctx) == MSG_OK);
    CHECK(msg_send(ctx, 0, 3, &byte, 1) == MSG_ERR_FINALIZED);
    CHECK(msg_recv(ctx, 0, 3, &got, 1, nullptr) == MSG_ERR_FINALIZED);
    CHECK(msg_barrier(ctx) == MSG_ERR_FINALIZED);
    msg_destroy(ctx);
}
