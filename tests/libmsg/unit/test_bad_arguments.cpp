// Bad arguments come back as status codes, never as crashes: NULL handles and outputs, ranks
// outside the job, tags outside [0, MSG_TAG_MAX], NULL buffers with a length.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <climits>

#include "local_job.hpp"

TEST_CASE("NULL handles and NULL outputs give MSG_ERR_INVALID_ARG", "[bad_args]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    int value = 0;
    char byte = 0;
    msg_info_t info{};
    msg_stats_t stats{};
    msg_completion_t c{};

    CHECK(msg_init(nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_finalize(nullptr) == MSG_ERR_INVALID_ARG);
    msg_destroy(nullptr);  // must simply return
    CHECK(msg_rank(nullptr, &value) == MSG_ERR_INVALID_ARG);
    CHECK(msg_rank(ctx, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_size(nullptr, &value) == MSG_ERR_INVALID_ARG);
    CHECK(msg_size(ctx, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_get_info(nullptr, &info) == MSG_ERR_INVALID_ARG);
    CHECK(msg_get_info(ctx, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_get_stats(nullptr, &stats) == MSG_ERR_INVALID_ARG);
    CHECK(msg_get_stats(ctx, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_barrier(nullptr) == MSG_ERR_INVALID_ARG);

    msg_cq_t *out = nullptr;
    CHECK(msg_cq_create(nullptr, &out) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_create(ctx, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_destroy(nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_wait(nullptr, 0, &c) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_wait(cq.get(), 0, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_post(nullptr, &c) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_post(cq.get(), nullptr) == MSG_ERR_INVALID_ARG);

    CHECK(msg_isend(nullptr, 0, 0, &byte, 1, cq.get(), nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_isend(ctx, 0, 0, &byte, 1, nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_irecv(nullptr, 0, 0, &byte, 1, cq.get(), nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_irecv(ctx, 0, 0, &byte, 1, nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_send(nullptr, 0, 0, &byte, 1) == MSG_ERR_INVALID_ARG);
    CHECK(msg_recv(nullptr, 0, 0, &byte, 1, nullptr) == MSG_ERR_INVALID_ARG);

    // Refused calls leave nothing behind on the CQ.
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);
}

TEST_CASE("a NULL buffer with a nonzero length gives MSG_ERR_INVALID_ARG", "[bad_args]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    for (size_t len : {size_t{1}, size_t{4096}, size_t{1} << 30}) {
        INFO("length " << len);
        CHECK(msg_isend(ctx, 0, 0, nullptr, len, cq.get(), nullptr) == MSG_ERR_INVALID_ARG);
        CHECK(msg_irecv(ctx, 0, 0, nullptr, len, cq.get(), nullptr) == MSG_ERR_INVALID_ARG);
        CHECK(msg_send(ctx, 0, 0, nullptr, len) == MSG_ERR_INVALID_ARG);
        CHECK(msg_recv(ctx, 0, 0, nullptr, len, nullptr) == MSG_ERR_INVALID_ARG);
    }
    msg_completion_t c{};
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);
}

TEST_CASE("tags outside [0, MSG_TAG_MAX] give MSG_ERR_INVALID_ARG", "[bad_args]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    char byte = 0;
    // MSG_ANY_TAG (-1) is only for receiving.
    for (int tag : {MSG_ANY_TAG, -2, -1000, INT_MIN}) {
        INFO("send tag " << tag);
        CHECK(msg_isend(ctx, 0, tag, &byte, 1, cq.get(), nullptr) == MSG_ERR_INVALID_ARG);
        CHECK(msg_send(ctx, 0, tag, &byte, 1) == MSG_ERR_INVALID_ARG);
    }
    for (int tag : {-2, -1000, INT_MIN}) {
        INFO("receive tag " << tag);
        CHECK(msg_irecv(ctx, 0, tag, &byte, 1, cq.get(), nullptr) == MSG_ERR_INVALID_ARG);
        CHECK(msg_recv(ctx, 0, tag, &byte, 1, nullptr) == MSG_ERR_INVALID_ARG);
    }
    msg_completion_t c{};
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);
}

TEST_CASE("ranks outside the job give MSG_ERR_UNKNOWN_RANK", "[bad_args]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    char byte = 0;
    for (int rank : {1, 2, 1000, INT_MAX, -2, INT_MIN}) {
        INFO("rank " << rank);
        CHECK(msg_isend(ctx, rank, 0, &byte, 1, cq.get(), nullptr) == MSG_ERR_UNKNOWN_RANK);
        CHECK(msg_send(ctx, rank, 0, &byte, 1) == MSG_ERR_UNKNOWN_RANK);
        CHECK(msg_irecv(ctx, rank, 0, &byte, 1, cq.get(), nullptr) == MSG_ERR_UNKNOWN_RANK);
        CHECK(msg_recv(ctx, rank, 0, &byte, 1, nullptr) == MSG_ERR_UNKNOWN_RANK);
    }
    msg_completion_t c{};
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);
}

TEST_CASE("msg_init rejects a config that cannot work", "[bad_args]") {
    msg_config_t good{};
    REQUIRE(msg_config_init(&good) == MSG_OK);
    struct Case {
        const char *what;
        void (*spoil)(msg_config_t &);
    };
    const Case cases[] = {
        {"unknown long protocol", [](msg_config_t &c) { c.long_protocol = 7; }},
        {"long protocol one past the last", [](msg_config_t &c) { c.long_protocol = 4; }},
        {"negative long protocol", [](msg_config_t &c) { c.long_protocol = -1; }},
        {"zero credits", [](msg_config_t &c) { c.credits = 0; }},
        {"negative credits", [](msg_config_t &c) { c.credits = -1; }},
        {"zero buffer size", [](msg_config_t &c) { c.buffer_size = 0; }},
        {"zero timeout", [](msg_config_t &c) { c.timeout_ms = 0; }},
        {"negative spin", [](msg_config_t &c) { c.spin_us = -5; }},
        {"unknown transport", [](msg_config_t &c) { c.transport = "carrier-pigeon"; }},
        {"unknown bootstrap", [](msg_config_t &c) { c.bootstrap = "carrier-pigeon"; }},
        {"negative heartbeat", [](msg_config_t &c) { c.heartbeat_ms = -1; }},
        {"no unexpected bytes", [](msg_config_t &c) { c.unexpected_bytes = 0; }},
        {"no unexpected messages", [](msg_config_t &c) { c.unexpected_count = 0; }},
    };
    for (const Case &k : cases) {
        INFO(k.what);
        msg_config_t bad = good;
        k.spoil(bad);
        msg_context_t *ctx = nullptr;
        const int rc = msg_init(&bad, &ctx);
        CHECK((rc == MSG_ERR_CONFIG || rc == MSG_ERR_INVALID_ARG));
        if (ctx != nullptr) msg_destroy(ctx);
    }
}
