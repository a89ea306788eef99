// msg_stats_t's path counters in a job of one: a message to itself arrives unexpected when no
// receive matching it is posted yet, expected when one is; long messages to itself move by no
// long-message protocol, so the per-protocol counts stay at zero.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <vector>

#include "local_job.hpp"

namespace {

msg_stats_t stats_of(const unit::LocalJob &job) {
    msg_stats_t s{};
    REQUIRE(msg_get_stats(job.ctx(), &s) == MSG_OK);
    return s;
}

size_t eager_max(const unit::LocalJob &job) {
    msg_info_t info{};
    REQUIRE(msg_get_info(job.ctx(), &info) == MSG_OK);
    return info.eager_max;
}

// Empty, eager, and the smallest long message.
size_t message_size(const unit::LocalJob &job, int which) {
    return which == 0 ? 0 : which == 1 ? 64 : eager_max(job) + 1;
}

msg_completion_t wait_one(const unit::LocalCq &cq) {
    msg_completion_t c{};
    REQUIRE(msg_cq_wait(cq.get(), 10000 * unit::slowdown(), &c) == MSG_OK);
    return c;
}

uint64_t long_total(const msg_stats_t &s) {
    return s.long_sent_sendrecv + s.long_received_sendrecv + s.long_sent_rdma_read +
           s.long_received_rdma_read + s.long_sent_rdma_write + s.long_received_rdma_write;
}

}  // namespace

TEST_CASE("a new context has counted no arrivals", "[stats]") {
    unit::LocalJob job;
    const msg_stats_t s = stats_of(job);
    CHECK(s.unexpected_messages == 0);
    CHECK(s.expected_messages == 0);
    CHECK(long_total(s) == 0);
}

TEST_CASE("a send to self before its receive is posted counts as unexpected", "[stats]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    const size_t size = message_size(job, GENERATE(0, 1, 2));
    INFO("size " << size);
    std::vector<char> out(size + 1, 'x'), in(size + 1);
    REQUIRE(msg_isend(job.ctx(), 0, 3, out.data(), size, cq.get(), &out) == MSG_OK);
    const msg_stats_t sent = stats_of(job);
    CHECK(sent.unexpected_messages == 1);
    CHECK(sent.expected_messages == 0);

    REQUIRE(msg_irecv(job.ctx(), 0, 3, in.data(), size, cq.get(), &in) == MSG_OK);
    for (int n = 0; n < 2; ++n) CHECK(wait_one(cq).status == MSG_OK);
    // Taking it from the unexpected list counts nothing more.
    const msg_stats_t taken = stats_of(job);
    CHECK(taken.unexpected_messages == 1);
    CHECK(taken.expected_messages == 0);
    CHECK(taken.messages_received == 1);
    CHECK(long_total(taken) == 0);
}

TEST_CASE("a send to self that finds its receive posted counts as expected", "[stats]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    const size_t size = message_size(job, GENERATE(0, 1, 2));
    const int source = GENERATE(0, MSG_ANY_SOURCE);
    const int tag = GENERATE(5, MSG_ANY_TAG);
    INFO("size " << size << ", source " << source << ", tag " << tag);
    std::vector<char> out(size + 1, 'x'), in(size + 1);
    REQUIRE(msg_irecv(job.ctx(), source, tag, in.data(), size, cq.get(), &in) == MSG_OK);
    REQUIRE(msg_isend(job.ctx(), 0, 5, out.data(), size, cq.get(), &out) == MSG_OK);
    for (int n = 0; n < 2; ++n) CHECK(wait_one(cq).status == MSG_OK);
    const msg_stats_t s = stats_of(job);
    CHECK(s.unexpected_messages == 0);
    CHECK(s.expected_messages == 1);
    CHECK(s.messages_received == 1);
    CHECK(long_total(s) == 0);
}

TEST_CASE("a posted receive for another tag leaves a send to self unexpected", "[stats]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    char other = 0, out = 'x', in = 0;
    REQUIRE(msg_irecv(job.ctx(), 0, 1, &other, 1, cq.get(), &other) == MSG_OK);
    REQUIRE(msg_send(job.ctx(), 0, 2, &out, 1) == MSG_OK);
    msg_stats_t s = stats_of(job);
    CHECK(s.unexpected_messages == 1);
    CHECK(s.expected_messages == 0);

    // The tag-1 receive is still posted: the next tag-1 send is expected.
    REQUIRE(msg_send(job.ctx(), 0, 1, &out, 1) == MSG_OK);
    REQUIRE(msg_recv(job.ctx(), 0, 2, &in, 1, nullptr) == MSG_OK);
    const msg_completion_t c = wait_one(cq);
    CHECK(c.cookie == &other);
    s = stats_of(job);
    CHECK(s.unexpected_messages == 1);
    CHECK(s.expected_messages == 1);
    CHECK(s.messages_received == 2);
}
