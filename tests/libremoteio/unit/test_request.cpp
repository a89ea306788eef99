// Requests to the caller's own rank: command + data to a handler on the
// shadow thread and to the worker thread, and their replies (status, data,
// cookie, truncation), in a job of one.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "local_rio.hpp"

using riounit::LocalRio;
using riounit::next_completion;

namespace {

constexpr uint32_t kCmdTransform = 7;
constexpr int kTransformStatus = 3;

// What the handler saw; it runs on the shadow thread, so it only counts and
// the test thread checks.
struct Seen {
    std::atomic<int> requests{0};
    std::atomic<int> failures{0};
};

// Answers with status 3 and the request's bytes, each plus one: the reply
// shows the handler saw the data.
void transform(rio_t *rio, rio_incoming_t *request, void *arg) {
    auto *seen = static_cast<Seen *>(arg);
    ++seen->requests;
    rio_request_info_t info{};
    if (rio_incoming_info(request, &info) != MSG_OK) ++seen->failures;
    std::vector<uint8_t> out(info.len);
    const auto *in = static_cast<const uint8_t *>(info.data);
    for (size_t i = 0; i < info.len; ++i) out[i] = static_cast<uint8_t>(in[i] + 1);
    if (rio_reply(rio, request, kTransformStatus, out.data(), out.size()) != MSG_OK)
        ++seen->failures;
}

size_t eager_max(const LocalRio &local) {
    msg_info_t info{};
    REQUIRE(msg_get_info(local.ctx(), &info) == MSG_OK);
    return info.eager_max;
}

}  // namespace

TEST_CASE("a request to the caller's own shadow thread runs its handler and the reply comes back",
          "[request]") {
    Seen seen;  // outlives the shadow thread
    LocalRio local;
    REQUIRE(rio_set_handler(local.rio(), kCmdTransform, transform, &seen) == MSG_OK);
    const size_t eager = eager_max(local);
    // Empty, inline with the header, and on the request's own tags (data and reply).
    for (size_t len : {size_t{0}, size_t{1}, eager / 2, eager + 1, size_t{3} << 20}) {
        INFO("len " << len);
        std::vector<uint8_t> data = riounit::pattern(len, len);
        std::vector<uint8_t> reply(len + 1, 0xee);
        int cookie = 0;
        REQUIRE(rio_request(local.rio(), 0, RIO_TARGET_SHADOW, kCmdTransform, data.data(), len,
                            reply.data(), reply.size(), local.cq(), &cookie) == MSG_OK);
        msg_completion_t c = next_completion(local.cq());
        CHECK(c.op == RIO_OP_REPLY);
        CHECK(c.status == kTransformStatus);
        CHECK(c.bytes == len);
        CHECK(c.source == 0);
        CHECK(c.tag == static_cast<int>(kCmdTransform));
        CHECK(c.cookie == &cookie);
        for (size_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>(data[i] + 1);
        CHECK(std::memcmp(reply.data(), data.data(), len) == 0);
        CHECK(reply[len] == 0xee);  // nothing past the reply
    }
    CHECK(seen.requests == 5);
    CHECK(seen.failures == 0);
    rio_stats_t s = local.stats();
    CHECK(s.requests_issued == 5);
    CHECK(s.replies_received == 5);
    CHECK(s.requests_served == 5);
    CHECK(s.requests_forwarded == 0);
}

TEST_CASE("a request to the caller's own worker arrives on the worker CQ and rio_reply answers it",
          "[request]") {
    LocalRio local;
    const size_t eager = eager_max(local);
    for (size_t len : {size_t{0}, size_t{5}, eager + 1}) {
        INFO("len " << len);
        std::vector<uint8_t> data = riounit::pattern(len, 11);
        char reply[16] = {};
        REQUIRE(rio_request(local.rio(), 0, RIO_TARGET_WORKER, 42, data.data(), len, reply,
                            sizeof reply, local.cq(), nullptr) == MSG_OK);
        // The request comes first: its reply cannot exist before rio_reply.
        msg_completion_t c = next_completion(local.cq());
        REQUIRE(c.op == RIO_OP_REQUEST);
        CHECK(c.source == 0);
        CHECK(c.tag == 42);
        CHECK(c.bytes == len);
        auto *request = static_cast<rio_incoming_t *>(c.cookie);
        rio_request_info_t info{};
        REQUIRE(rio_incoming_info(request, &info) == MSG_OK);
        CHECK(info.source == 0);
        CHECK(info.command == 42);
        CHECK(info.len == len);
        CHECK(info.reply_capacity == sizeof reply);
        CHECK((len == 0 || std::memcmp(info.data, data.data(), len) == 0));
        REQUIRE(rio_reply(local.rio(), request, 0, "answered", 8) == MSG_OK);

        c = next_completion(local.cq());
        CHECK(c.op == RIO_OP_REPLY);
        CHECK(c.status == RIO_OK);
        CHECK(c.bytes == 8);
        CHECK(c.tag == 42);
        CHECK(std::memcmp(reply, "answered", 8) == 0);
    }
    CHECK(local.stats().requests_forwarded == 3);
}

TEST_CASE("a reply larger than the requester's buffer is cut to it with MSG_ERR_TRUNCATED",
          "[request]") {
    Seen seen;  // outlives the shadow thread
    LocalRio local;
    const std::vector<uint8_t> data = riounit::pattern(100, 5);
    std::vector<uint8_t> reply(10, 0);
    // A successful reply that does not fit.
    REQUIRE(rio_request(local.rio(), 0, RIO_TARGET_WORKER, 9, nullptr, 0, reply.data(),
                        reply.size(), local.cq(), nullptr) == MSG_OK);
    msg_completion_t c = next_completion(local.cq());
    REQUIRE(c.op == RIO_OP_REQUEST);
    REQUIRE(rio_reply(local.rio(), static_cast<rio_incoming_t *>(c.cookie), RIO_OK, data.data(),
                      data.size()) == MSG_OK);
    c = next_completion(local.cq());
    CHECK(c.op == RIO_OP_REPLY);
    CHECK(c.status == MSG_ERR_TRUNCATED);
    CHECK(c.bytes == reply.size());
    CHECK(std::memcmp(reply.data(), data.data(), reply.size()) == 0);

    // An application status is kept; the data is cut all the same.
    REQUIRE(rio_set_handler(local.rio(), kCmdTransform, transform, &seen) == MSG_OK);
    size_t got = 0;
    CHECK(rio_call(local.rio(), 0, RIO_TARGET_SHADOW, kCmdTransform, data.data(), data.size(),
                   reply.data(), reply.size(), &got) == kTransformStatus);
    CHECK(got == reply.size());
    for (size_t i = 0; i < reply.size(); ++i) CHECK(reply[i] == static_cast<uint8_t>(data[i] + 1));
}

TEST_CASE("a command with no handler, or a worker with no CQ, is refused with RIO_ERR_NO_HANDLER",
          "[request]") {
    Seen seen;
    LocalRio local(nullptr, false);
    char byte = 1;
    CHECK(rio_call(local.rio(), 0, RIO_TARGET_SHADOW, 99, &byte, 1, nullptr, 0, nullptr) ==
          RIO_ERR_NO_HANDLER);
    CHECK(rio_call(local.rio(), 0, RIO_TARGET_WORKER, 99, &byte, 1, nullptr, 0, nullptr) ==
          RIO_ERR_NO_HANDLER);
    // A handler removed is gone.
    REQUIRE(rio_set_handler(local.rio(), kCmdTransform, transform, &seen) == MSG_OK);
    REQUIRE(rio_set_handler(local.rio(), kCmdTransform, nullptr, nullptr) == MSG_OK);
    CHECK(rio_call(local.rio(), 0, RIO_TARGET_SHADOW, kCmdTransform, &byte, 1, nullptr, 0,
                   nullptr) == RIO_ERR_NO_HANDLER);
    CHECK(seen.requests == 0);
    CHECK(local.stats().requests_refused == 3);
}
