// The reserved tag range: the application's calls naming a reserved tag get
// MSG_ERR_RESERVED_TAG, its MSG_ANY_TAG receives and probes never match a reserved-tag message,
// and the flagged path (MSG_FLAG_RESERVED_TAG, libremoteio's) sends and receives there.
#include <msg/msg.h>

#include <catch2/catch.hpp>

#include "local_job.hpp"

TEST_CASE("application calls on reserved tags get MSG_ERR_RESERVED_TAG", "[reserved_tags]") {
    STATIC_REQUIRE(MSG_TAG_USER_MAX + 1 == MSG_TAG_RESERVED_FIRST);
    STATIC_REQUIRE(MSG_TAG_RESERVED_FIRST < MSG_TAG_MAX);
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    char byte = 0;
    for (int tag : {MSG_TAG_RESERVED_FIRST, MSG_TAG_RESERVED_FIRST + 17, MSG_TAG_MAX}) {
        INFO("tag " << tag);
        CHECK(msg_isend(ctx, 0, tag, &byte, 1, cq.get(), nullptr) == MSG_ERR_RESERVED_TAG);
        CHECK(msg_send(ctx, 0, tag, &byte, 1) == MSG_ERR_RESERVED_TAG);
        CHECK(msg_irecv(ctx, 0, tag, &byte, 1, cq.get(), nullptr) == MSG_ERR_RESERVED_TAG);
        CHECK(msg_recv(ctx, 0, tag, &byte, 1, nullptr) == MSG_ERR_RESERVED_TAG);
        msg_completion_t c{};
        int flag = 0;
        CHECK(msg_probe(ctx, 0, tag, 0, &c) == MSG_ERR_RESERVED_TAG);
        CHECK(msg_iprobe(ctx, 0, tag, &flag, &c) == MSG_ERR_RESERVED_TAG);
        CHECK(msg_isend_flags(ctx, 0, tag, &byte, 1, cq.get(), nullptr, 0) == MSG_ERR_RESERVED_TAG);
    }
    // The top application tag is fine; unknown flags are refused.
    REQUIRE(msg_send(ctx, 0, MSG_TAG_USER_MAX, "u", 1) == MSG_OK);
    REQUIRE(msg_recv(ctx, 0, MSG_TAG_USER_MAX, &byte, 1, nullptr) == MSG_OK);
    CHECK(byte == 'u');
    CHECK(msg_isend_flags(ctx, 0, 1, &byte, 1, cq.get(), nullptr, 0x80) == MSG_ERR_INVALID_ARG);
    CHECK(msg_irecv_flags(ctx, 0, 1, &byte, 1, cq.get(), nullptr, 0x80) == MSG_ERR_INVALID_ARG);
    msg_completion_t c{};
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);  // refused calls post nothing
}

TEST_CASE("the flagged path uses reserved tags, out of the application's wildcards",
          "[reserved_tags]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_context_t *ctx = job.ctx();
    const int tag = MSG_TAG_RESERVED_FIRST + 5;
    char r = 'r', a = 'a';
    REQUIRE(msg_isend_flags(ctx, 0, tag, &r, 1, cq.get(), nullptr, MSG_FLAG_RESERVED_TAG) ==
            MSG_OK);
    REQUIRE(msg_isend(ctx, 0, 3, &a, 1, cq.get(), nullptr) == MSG_OK);
    // The application's wildcards see only its own message, though the reserved one came first.
    msg_completion_t c{};
    REQUIRE(msg_probe(ctx, MSG_ANY_SOURCE, MSG_ANY_TAG, 0, &c) == MSG_OK);
    CHECK(c.tag == 3);
    char got = 0;
    REQUIRE(msg_recv(ctx, MSG_ANY_SOURCE, MSG_ANY_TAG, &got, 1, &c) == MSG_OK);
    CHECK(c.tag == 3);
    CHECK(got == 'a');
    int flag = 1;
    REQUIRE(msg_iprobe(ctx, MSG_ANY_SOURCE, MSG_ANY_TAG, &flag, &c) == MSG_OK);
    CHECK(flag == 0);
    // A flagged wildcard receive takes the reserved one.
    REQUIRE(msg_irecv_flags(ctx, MSG_ANY_SOURCE, MSG_ANY_TAG, &got, 1, cq.get(), &got,
                            MSG_FLAG_RESERVED_TAG) == MSG_OK);
    int sends = 0;
    bool received = false;
    for (int n = 0; n < 3; ++n) {
        REQUIRE(msg_cq_wait(cq.get(), 5000, &c) == MSG_OK);
        CHECK(c.status == MSG_OK);
        if (c.op == MSG_OP_SEND) ++sends;
        if (c.op == MSG_OP_RECV) {
            received = true;
            CHECK(c.tag == tag);
            CHECK(c.cookie == &got);
        }
    }
    CHECK(sends == 2);
    CHECK(received);
    CHECK(got == 'r');
}
