// rio_finalize in a job of one: it waits for the process's outstanding
// requests while refusing new ones, gives up on one never answered after its
// timeout, and afterwards every request is refused with MSG_ERR_FINALIZED.
#include <sched.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "local_rio.hpp"

using riounit::LocalRio;

namespace {

constexpr uint32_t kCmdHold = 12;

// Keeps the requests unanswered; the test answers them from another thread.
struct Held {
    std::mutex mu;
    std::vector<rio_incoming_t *> requests;
};

void hold(rio_t *, rio_incoming_t *request, void *arg) {
    auto *held = static_cast<Held *>(arg);
    std::lock_guard<std::mutex> lk(held->mu);
    held->requests.push_back(request);
}

size_t held_count(Held &held) {
    std::lock_guard<std::mutex> lk(held.mu);
    return held.requests.size();
}

}  // namespace

TEST_CASE("finalize waits for outstanding requests, refusing new ones meanwhile", "[finalize]") {
    constexpr int kRequests = 4;
    Held held;
    LocalRio local;
    REQUIRE(rio_set_handler(local.rio(), kCmdHold, hold, &held) == MSG_OK);
    std::vector<int> cookies(kRequests);
    for (int i = 0; i < kRequests; ++i)
        REQUIRE(rio_request(local.rio(), 0, RIO_TARGET_SHADOW, kCmdHold, nullptr, 0, nullptr, 0,
                            local.cq(), &cookies[static_cast<size_t>(i)]) == MSG_OK);
    while (held_count(held) < kRequests) sched_yield();

    // Once finalize has begun, a new request is refused (rank -1 would be
    // MSG_ERR_UNKNOWN_RANK before); only then the held requests are answered.
    std::atomic<int> refused_while_closing{0};
    std::thread answerer([&] {
        while (rio_request(local.rio(), -1, RIO_TARGET_SHADOW, kCmdHold, nullptr, 0, nullptr, 0,
                           local.cq(), nullptr) != RIO_ERR_SHUTDOWN)
            sched_yield();
        ++refused_while_closing;
        std::lock_guard<std::mutex> lk(held.mu);
        for (rio_incoming_t *request : held.requests)
            rio_reply(local.rio(), request, 1, nullptr, 0);
    });
    const int rc = rio_finalize(local.rio());
    answerer.join();
    CHECK(rc == RIO_OK);
    CHECK(refused_while_closing == 1);
    // Every reply was in before finalize returned.
    for (int i = 0; i < kRequests; ++i) {
        msg_completion_t c{};
        REQUIRE(msg_cq_wait(local.cq(), 0, &c) == MSG_OK);
        CHECK(c.op == RIO_OP_REPLY);
        CHECK(c.status == 1);
    }
    CHECK(riounit::cq_empty(local.cq()));

    // After finalize: refused, and finalize again is a no-op.
    char byte = 0;
    uint64_t length = 0;
    CHECK(rio_request(local.rio(), 0, RIO_TARGET_SHADOW, kCmdHold, &byte, 1, nullptr, 0, local.cq(),
                      nullptr) == MSG_ERR_FINALIZED);
    CHECK(rio_call(local.rio(), 0, RIO_TARGET_WORKER, 1, &byte, 1, nullptr, 0, nullptr) ==
          MSG_ERR_FINALIZED);
    CHECK(rio_stat(local.rio(), 0, 1, &length, nullptr) == MSG_ERR_FINALIZED);
    CHECK(rio_read_sync(local.rio(), 0, 1, 0, &byte, 1, nullptr) == MSG_ERR_FINALIZED);
    CHECK(rio_finalize(local.rio()) == RIO_OK);
    // The libmsg context is the application's and still works.
    CHECK(msg_send(local.ctx(), 0, 5, &byte, 1) == MSG_OK);
    CHECK(msg_recv(local.ctx(), 0, 5, &byte, 1, nullptr) == MSG_OK);
}

TEST_CASE("finalize gives up on a request never answered with RIO_ERR_TIMEOUT", "[finalize]") {
    rio_options_t options;
    rio_options_init(&options);
    options.finalize_timeout_ms = 200;
    LocalRio local(&options);
    REQUIRE(rio_request(local.rio(), 0, RIO_TARGET_WORKER, 3, nullptr, 0, nullptr, 0, local.cq(),
                        nullptr) == MSG_OK);
    msg_completion_t c = riounit::next_completion(local.cq());
    REQUIRE(c.op == RIO_OP_REQUEST);
    // The worker (this thread) does not answer before finalize.
    CHECK(rio_finalize(local.rio()) == RIO_ERR_TIMEOUT);
    // Answered late, the request still completes, so nothing is left in flight.
    REQUIRE(rio_reply(local.rio(), static_cast<rio_incoming_t *>(c.cookie), 0, nullptr, 0) ==
            MSG_OK);
    c = riounit::next_completion(local.cq());
    CHECK(c.op == RIO_OP_REPLY);
    CHECK(c.status == RIO_OK);
}
