// Transfers and request data beyond the server's max_transfer are refused
// with RIO_ERR_TOO_LARGE, before any file I/O or handler runs; up to it they
// go through.
#include <atomic>
#include <catch2/catch.hpp>
#include <vector>

#include "local_rio.hpp"

using riounit::LocalRio;

namespace {

constexpr size_t kMax = size_t{256} << 10;
constexpr uint32_t kCmdCount = 5;

void count(rio_t *rio, rio_incoming_t *request, void *arg) {
    ++*static_cast<std::atomic<int> *>(arg);
    rio_reply(rio, request, RIO_OK, nullptr, 0);
}

}  // namespace

TEST_CASE("a transfer or request data larger than max_transfer is refused", "[too_large]") {
    rio_options_t options;
    rio_options_init(&options);
    options.max_transfer = kMax;
    std::atomic<int> handled{0};
    riounit::ScratchFile file(2 * kMax, 9);
    LocalRio local(&options);
    REQUIRE(rio_set_handler(local.rio(), kCmdCount, count, &handled) == MSG_OK);
    uint64_t handle = 0;
    REQUIRE(rio_export(local.rio(), file.path(), 0, RIO_EXPORT_TO_END, RIO_EXPORT_READ_WRITE,
                       &handle) == MSG_OK);

    std::vector<uint8_t> buf(kMax + 1);
    size_t moved = 0;
    CHECK(rio_read_sync(local.rio(), 0, handle, 0, buf.data(), kMax + 1, nullptr) ==
          RIO_ERR_TOO_LARGE);
    CHECK(rio_write_sync(local.rio(), 0, handle, 0, buf.data(), kMax + 1) == RIO_ERR_TOO_LARGE);
    CHECK(rio_call(local.rio(), 0, RIO_TARGET_SHADOW, kCmdCount, buf.data(), kMax + 1, nullptr, 0,
                   nullptr) == RIO_ERR_TOO_LARGE);
    CHECK(handled == 0);
    rio_stats_t s = local.stats();
    CHECK(s.bytes_read == 0);
    CHECK(s.bytes_written == 0);
    CHECK(s.requests_refused == 3);
    CHECK(s.request_data_held == 0);  // nothing of the refused data is left held

    // Exactly max_transfer is allowed.
    CHECK(rio_read_sync(local.rio(), 0, handle, 0, buf.data(), kMax, &moved) == RIO_OK);
    CHECK(moved == kMax);
    CHECK(rio_call(local.rio(), 0, RIO_TARGET_SHADOW, kCmdCount, buf.data(), kMax, nullptr, 0,
                   nullptr) == RIO_OK);
    CHECK(handled == 1);
    CHECK(rio_write_sync(local.rio(), 0, handle, kMax, buf.data(), kMax) == RIO_OK);
    CHECK(local.stats().bytes_written == kMax);
}
