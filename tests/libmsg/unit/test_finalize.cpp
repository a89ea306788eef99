// After msg_finalize every call on the context returns MSG_ERR_FINALIZED until msg_destroy, and
// msg_destroy finalizes a context not yet finalized.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <vector>

#include "local_job.hpp"

TEST_CASE("calls after msg_finalize return MSG_ERR_FINALIZED", "[finalize]") {
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(nullptr, &ctx) == MSG_OK);
    msg_cq_t *cq = nullptr;
    REQUIRE(msg_cq_create(ctx, &cq) == MSG_OK);
    REQUIRE(msg_finalize(ctx) == MSG_OK);

    int value = 0;
    char byte = 0;
    msg_info_t info{};
    msg_stats_t stats{};
    msg_cq_t *late = nullptr;
    CHECK(msg_rank(ctx, &value) == MSG_ERR_FINALIZED);
    CHECK(msg_size(ctx, &value) == MSG_ERR_FINALIZED);
    CHECK(msg_get_info(ctx, &info) == MSG_ERR_FINALIZED);
    CHECK(msg_get_stats(ctx, &stats) == MSG_ERR_FINALIZED);
    CHECK(msg_barrier(ctx) == MSG_ERR_FINALIZED);
    CHECK(msg_cq_create(ctx, &late) == MSG_ERR_FINALIZED);
    CHECK(late == nullptr);
    CHECK(msg_send(ctx, 0, 0, &byte, 1) == MSG_ERR_FINALIZED);
    CHECK(msg_recv(ctx, 0, 0, &byte, 1, nullptr) == MSG_ERR_FINALIZED);
    CHECK(msg_isend(ctx, 0, 0, &byte, 1, cq, nullptr) == MSG_ERR_FINALIZED);
    CHECK(msg_irecv(ctx, 0, 0, &byte, 1, cq, nullptr) == MSG_ERR_FINALIZED);
    CHECK(msg_finalize(ctx) == MSG_ERR_FINALIZED);

    // The CQ itself may be released either way; it must not report work that never started.
    const int rc = msg_cq_destroy(cq);
    CHECK((rc == MSG_OK || rc == MSG_ERR_FINALIZED));
    msg_destroy(ctx);
}

namespace {

// Records what a callback CQ is handed, so a test can look after the context is gone.
struct Seen {
    std::vector<msg_completion_t> completions;
};

void record(void *arg, const msg_completion_t *c) {
    static_cast<Seen *>(arg)->completions.push_back(*c);
}

}  // namespace

// Finalizing completes a receive still posted with MSG_ERR_FINALIZED, so a receive left posted
// when msg_destroy is called shows whether msg_destroy finalized first.
TEST_CASE("msg_destroy without msg_finalize finalizes first", "[finalize]") {
    msg_context_t *ctx = nullptr;
    REQUIRE(msg_init(nullptr, &ctx) == MSG_OK);
    Seen seen;
    msg_cq_t *cq = nullptr;
    REQUIRE(msg_cq_create_callback(ctx, record, &seen, &cq) == MSG_OK);
    char byte = 0;
    int cookie = 0;
    REQUIRE(msg_irecv(ctx, 0, 7, &byte, 1, cq, &cookie) == MSG_OK);
    REQUIRE(seen.completions.empty());
    msg_destroy(ctx);

    REQUIRE(seen.completions.size() == 1);
    const msg_completion_t &c = seen.completions.front();
    CHECK(c.op == MSG_OP_RECV);
    CHECK(c.status == MSG_ERR_FINALIZED);
    CHECK(c.cookie == &cookie);
    CHECK(c.tag == 7);
    // Nothing is left bound to the CQ.
    CHECK(msg_cq_destroy(cq) == MSG_OK);
}
