// Handles a process never exported, or withdrew, reach nothing: stat, read
// and write are refused with RIO_ERR_BAD_HANDLE and counted as refused.
#include <catch2/catch.hpp>
#include <vector>

#include "local_rio.hpp"

using riounit::LocalRio;

TEST_CASE("a handle that was never exported, or was withdrawn, is refused", "[bad_handle]") {
    riounit::ScratchFile file(8192, 3);
    LocalRio local;
    uint64_t handle = 0, other = 0;
    REQUIRE(rio_export(local.rio(), file.path(), 0, 4096, RIO_EXPORT_READ_WRITE, &handle) ==
            MSG_OK);
    REQUIRE(rio_export(local.rio(), file.path(), 4096, 4096, RIO_EXPORT_READ_WRITE, &other) ==
            MSG_OK);
    CHECK(handle != 0);
    CHECK(other != 0);
    CHECK(handle != other);

    std::vector<uint8_t> buf(64);
    uint64_t length = 0;
    // Neither neighbour of a live handle is one.
    for (uint64_t guess : {uint64_t{0}, handle + 1, handle - 1}) {
        if (guess == other) continue;
        INFO("guess " << guess);
        CHECK(rio_stat(local.rio(), 0, guess, &length, nullptr) == RIO_ERR_BAD_HANDLE);
        CHECK(rio_read_sync(local.rio(), 0, guess, 0, buf.data(), buf.size(), nullptr) ==
              RIO_ERR_BAD_HANDLE);
        CHECK(rio_write_sync(local.rio(), 0, guess, 0, buf.data(), buf.size()) ==
              RIO_ERR_BAD_HANDLE);
    }
    const uint64_t refused = local.stats().requests_refused;
    CHECK(refused >= 6);

    // Withdrawn: gone for every request, and only once; the other stays.
    REQUIRE(rio_withdraw(local.rio(), handle) == RIO_OK);
    CHECK(rio_withdraw(local.rio(), handle) == RIO_ERR_BAD_HANDLE);
    CHECK(rio_stat(local.rio(), 0, handle, &length, nullptr) == RIO_ERR_BAD_HANDLE);
    CHECK(rio_read_sync(local.rio(), 0, handle, 0, buf.data(), buf.size(), nullptr) ==
          RIO_ERR_BAD_HANDLE);
    CHECK(rio_write_sync(local.rio(), 0, handle, 0, buf.data(), buf.size()) == RIO_ERR_BAD_HANDLE);
    CHECK(local.stats().requests_refused == refused + 3);
    REQUIRE(rio_stat(local.rio(), 0, other, &length, nullptr) == RIO_OK);
    CHECK(length == 4096);
}
