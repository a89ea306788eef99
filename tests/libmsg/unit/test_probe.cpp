// msg_probe and msg_iprobe in a job of one (sends to self): what they report, that they take
// nothing, their timeouts and their argument checks.
#include <msg/msg.h>

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "local_job.hpp"

namespace {

size_t eager_max(msg_context_t *ctx) {
    msg_info_t info{};
    REQUIRE(msg_get_info(ctx, &info) == MSG_OK);
    return info.eager_max;
}

}  // namespace

TEST_CASE("iprobe reports an eager self send without taking it", "[probe]") {
    unit::LocalJob job;
    int flag = -1;
    msg_completion_t c{};
    REQUIRE(msg_iprobe(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, &flag, &c) == MSG_OK);
    CHECK(flag == 0);
    REQUIRE(msg_send(job.ctx(), 0, 7, "hello", 5) == MSG_OK);
    REQUIRE(msg_send(job.ctx(), 0, 8, "abc", 3) == MSG_OK);
    REQUIRE(msg_iprobe(job.ctx(), 0, 8, &flag, &c) == MSG_OK);
    CHECK(flag == 1);
    CHECK(c.op == MSG_OP_RECV);
    CHECK(c.status == MSG_OK);
    CHECK(c.source == 0);
    CHECK(c.tag == 8);
    CHECK(c.bytes == 3);
    CHECK(c.data == 3);
    REQUIRE(msg_probe(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, 0, &c) == MSG_OK);
    CHECK(c.tag == 7);
    CHECK(c.bytes == 5);
    char buf[8] = {};
    msg_completion_t r{};
    REQUIRE(msg_recv(job.ctx(), 0, 7, buf, sizeof buf, &r) == MSG_OK);
    CHECK(std::string(buf, r.bytes) == "hello");
    REQUIRE(msg_recv(job.ctx(), 0, 8, buf, sizeof buf, &r) == MSG_OK);
    REQUIRE(msg_iprobe(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, &flag, &c) == MSG_OK);
    CHECK(flag == 0);
}

TEST_CASE("probe reports a long self send before its data moves", "[probe]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    const size_t size = 4 * eager_max(job.ctx()) + 3;
    std::vector<char> out(size, 'x'), in(size);
    // A long send to self waits for its receive, like a rendezvous.
    REQUIRE(msg_isend(job.ctx(), 0, 3, out.data(), size, cq.get(), nullptr) == MSG_OK);
    msg_completion_t c{};
    REQUIRE(msg_probe(job.ctx(), 0, 3, 1000 * unit::slowdown(), &c) == MSG_OK);
    CHECK(c.bytes == size);
    CHECK(c.data == size);
    CHECK(c.tag == 3);
    msg_completion_t r{};
    REQUIRE(msg_recv(job.ctx(), c.source, c.tag, in.data(), c.bytes, &r) == MSG_OK);
    CHECK(r.bytes == size);
    CHECK(in == out);
    REQUIRE(msg_cq_wait(cq.get(), 5000, &c) == MSG_OK);
    CHECK(c.status == MSG_OK);
}

TEST_CASE("a blocked probe wakes for a send from another thread", "[probe]") {
    unit::LocalJob job;
    msg_completion_t c{};
    // Catch2's assertions belong to the test's own thread: the sender only records.
    int sent = -100;
    std::thread sender([&] { sent = msg_send(job.ctx(), 0, 42, "z", 1); });
    CHECK(msg_probe(job.ctx(), MSG_ANY_SOURCE, 42, -1, &c) == MSG_OK);
    sender.join();
    CHECK(sent == MSG_OK);
    CHECK(c.tag == 42);
    char b = 0;
    REQUIRE(msg_recv(job.ctx(), 0, 42, &b, 1, nullptr) == MSG_OK);
    CHECK(b == 'z');
}

TEST_CASE("probe times out after about the asked time", "[probe]") {
    unit::LocalJob job;
    msg_completion_t c{};
    const double start = unit::now_seconds();
    CHECK(msg_probe(job.ctx(), MSG_ANY_SOURCE, MSG_ANY_TAG, 50, &c) == MSG_ERR_TIMEOUT);
    const double elapsed = unit::now_seconds() - start;
    CHECK(elapsed >= 0.049);
    CHECK(elapsed <= 0.05 + 0.15 * unit::slowdown());
}

TEST_CASE("probe checks its arguments", "[probe]") {
    unit::LocalJob job;
    msg_completion_t c{};
    int flag = 0;
    CHECK(msg_probe(nullptr, 0, 0, 0, &c) == MSG_ERR_INVALID_ARG);
    CHECK(msg_probe(job.ctx(), 0, 0, 0, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_iprobe(job.ctx(), 0, 0, nullptr, &c) == MSG_ERR_INVALID_ARG);
    CHECK(msg_iprobe(job.ctx(), 0, 0, &flag, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_probe(job.ctx(), 1, 0, 0, &c) == MSG_ERR_UNKNOWN_RANK);
    CHECK(msg_probe(job.ctx(), 0, -5, 0, &c) == MSG_ERR_INVALID_ARG);
    REQUIRE(msg_finalize(job.ctx()) == MSG_OK);
    CHECK(msg_iprobe(job.ctx(), 0, 0, &flag, &c) == MSG_ERR_FINALIZED);
}
