// A receive smaller than its message reports MSG_ERR_TRUNCATED, the bytes delivered and, in
// data, the sender's size: eager and long (sends to self in a job of one; the truncation
// scenario covers every provider and protocol).
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <vector>

#include "local_job.hpp"

TEST_CASE("a truncated eager receive reports the sender's size", "[truncated_size]") {
    unit::LocalJob job;
    std::vector<char> out(100, 'e'), in(10, 0);
    REQUIRE(msg_send(job.ctx(), 0, 1, out.data(), out.size()) == MSG_OK);
    msg_completion_t c{};
    CHECK(msg_recv(job.ctx(), 0, 1, in.data(), in.size(), &c) == MSG_ERR_TRUNCATED);
    CHECK(c.status == MSG_ERR_TRUNCATED);
    CHECK(c.bytes == 10);
    CHECK(c.data == 100);
    // A receive that fits reports the same size in both.
    REQUIRE(msg_send(job.ctx(), 0, 1, out.data(), 7) == MSG_OK);
    CHECK(msg_recv(job.ctx(), 0, 1, in.data(), in.size(), &c) == MSG_OK);
    CHECK(c.bytes == 7);
    CHECK(c.data == 7);
}

TEST_CASE("a truncated long receive reports the sender's size", "[truncated_size]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_info_t info{};
    REQUIRE(msg_get_info(job.ctx(), &info) == MSG_OK);
    const size_t size = 3 * info.eager_max + 1;
    std::vector<char> out(size, 'l'), in(10, 0);
    REQUIRE(msg_isend(job.ctx(), 0, 2, out.data(), size, cq.get(), nullptr) == MSG_OK);
    msg_completion_t c{};
    CHECK(msg_recv(job.ctx(), 0, 2, in.data(), in.size(), &c) == MSG_ERR_TRUNCATED);
    CHECK(c.bytes == 10);
    CHECK(c.data == size);
    REQUIRE(msg_cq_wait(cq.get(), 5000, &c) == MSG_OK);
    CHECK(c.op == MSG_OP_SEND);
}
