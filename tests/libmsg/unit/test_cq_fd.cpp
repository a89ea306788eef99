// msg_cq_get_fd: an eventfd that poll() finds readable exactly while the CQ holds completions,
// including completions that arrive while the application only waits in poll().
#include <msg/msg.h>
#include <poll.h>

#include <catch2/catch.hpp>
#include <thread>

#include "local_job.hpp"

namespace {

// poll() on fd with the given timeout: true if readable.
bool readable(int fd, int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, timeout_ms);
    REQUIRE(n >= 0);
    return n == 1 && (p.revents & POLLIN) != 0;
}

}  // namespace

TEST_CASE("the CQ fd is readable exactly while completions are queued", "[cq_fd]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    int fd = -1, again = -2;
    REQUIRE(msg_cq_get_fd(cq.get(), &fd) == MSG_OK);
    REQUIRE(fd >= 0);
    REQUIRE(msg_cq_get_fd(cq.get(), &again) == MSG_OK);
    CHECK(again == fd);
    CHECK_FALSE(readable(fd, 0));
    msg_completion_t e{};
    e.op = MSG_OP_USER;
    REQUIRE(msg_cq_post(cq.get(), &e) == MSG_OK);
    REQUIRE(msg_cq_post(cq.get(), &e) == MSG_OK);
    CHECK(readable(fd, 0));
    msg_completion_t c{};
    REQUIRE(msg_cq_wait(cq.get(), 0, &c) == MSG_OK);
    CHECK(readable(fd, 0));  // one left
    REQUIRE(msg_cq_wait(cq.get(), 0, &c) == MSG_OK);
    CHECK_FALSE(readable(fd, 0));
    CHECK(msg_cq_wait(cq.get(), 0, &c) == MSG_ERR_TIMEOUT);
}

TEST_CASE("the CQ fd wakes a poll() for a receive completed by libmsg", "[cq_fd]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    int fd = -1;
    REQUIRE(msg_cq_get_fd(cq.get(), &fd) == MSG_OK);
    char in = 0;
    REQUIRE(msg_irecv(job.ctx(), 0, 5, &in, 1, cq.get(), &in) == MSG_OK);
    CHECK_FALSE(readable(fd, 0));
    // Catch2's assertions belong to the test's own thread: the sender only records.
    int sent = -100;
    std::thread sender([&] { sent = msg_send(job.ctx(), 0, 5, "q", 1); });
    // No bound but the test's own timeout: the wake-up must come.
    CHECK(readable(fd, -1));
    sender.join();
    CHECK(sent == MSG_OK);
    msg_completion_t c{};
    REQUIRE(msg_cq_wait(cq.get(), 0, &c) == MSG_OK);
    CHECK(c.cookie == &in);
    CHECK(in == 'q');
    CHECK_FALSE(readable(fd, 0));
}

TEST_CASE("a CQ fd asked for late is readable for what is already queued", "[cq_fd]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    msg_completion_t e{};
    REQUIRE(msg_cq_post(cq.get(), &e) == MSG_OK);
    int fd = -1;
    REQUIRE(msg_cq_get_fd(cq.get(), &fd) == MSG_OK);
    CHECK(readable(fd, 0));
    REQUIRE(msg_cq_wait(cq.get(), 0, &e) == MSG_OK);
    CHECK_FALSE(readable(fd, 0));
}

TEST_CASE("msg_cq_get_fd checks its arguments", "[cq_fd]") {
    unit::LocalJob job;
    unit::LocalCq cq(job.ctx());
    int fd = -1;
    CHECK(msg_cq_get_fd(nullptr, &fd) == MSG_ERR_INVALID_ARG);
    CHECK(msg_cq_get_fd(cq.get(), nullptr) == MSG_ERR_INVALID_ARG);
    msg_cq_t *cb = nullptr;
    REQUIRE(msg_cq_create_callback(
                job.ctx(), [](void *, const msg_completion_t *) {}, nullptr, &cb) == MSG_OK);
    CHECK(msg_cq_get_fd(cb, &fd) == MSG_ERR_INVALID_ARG);
    REQUIRE(msg_cq_destroy(cb) == MSG_OK);
}
