// msg_cq_wait on an empty CQ returns MSG_ERR_TIMEOUT after about the time asked, and 0 means
// just look.
#include <msg/msg.h>

#include <catch2/catch.hpp>

#include "local_job.hpp"

TEST_CASE("msg_cq_wait times out after about the asked time", "[cq_timeout]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    const double slack = 0.15 * unit::slowdown();
    for (int timeout_ms : {0, 1, 20, 200, 1000}) {
        INFO("timeout_ms " << timeout_ms);
        msg_completion_t c{};
        const double start = unit::now_seconds();
        CHECK(msg_cq_wait(cq.get(), timeout_ms, &c) == MSG_ERR_TIMEOUT);
        const double elapsed = unit::now_seconds() - start;
        INFO("returned after " << elapsed << " s");
        CHECK(elapsed >= timeout_ms / 1000.0 - 0.001);
        CHECK(elapsed <= timeout_ms / 1000.0 + slack);
    }
}

TEST_CASE("a pending receive does not end a wait early", "[cq_timeout]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    // A receive from our own rank that nobody sends: the CQ has work bound to it but no result.
    char byte = 0;
    REQUIRE(msg_irecv(job.ctx(), 0, 9, &byte, 1, cq.get(), nullptr) == MSG_OK);
    msg_completion_t c{};
    const double start = unit::now_seconds();
    CHECK(msg_cq_wait(cq.get(), 300, &c) == MSG_ERR_TIMEOUT);
    const double elapsed = unit::now_seconds() - start;
    CHECK(elapsed >= 0.299);
    CHECK(elapsed <= 0.3 + 0.15 * unit::slowdown());
    // Complete it so the CQ can be destroyed.
    REQUIRE(msg_send(job.ctx(), 0, 9, "z", 1) == MSG_OK);
    REQUIRE(msg_cq_wait(cq.get(), 5000, &c) == MSG_OK);
    CHECK(c.status == MSG_OK);
    CHECK(byte == 'z');
}
