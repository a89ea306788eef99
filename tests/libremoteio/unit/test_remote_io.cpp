// Remote I/O to the caller's own rank: stat, read and write of an exported
// byte range through the shadow thread, against what the file really holds,
// with io_uring and with the pread/pwrite threads.
#include <catch2/catch.hpp>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "local_rio.hpp"
#include "scoped_env.hpp"

using riounit::LocalRio;
using riounit::ScratchFile;

namespace {

using testing_env::ScopedEnv;

constexpr uint64_t kSeed = 77;
constexpr size_t kFileLen = (size_t{3} << 20) + 4099;
constexpr uint64_t kBase = 4096 + 5;  // the export starts off a page boundary
constexpr uint64_t kLength = (size_t{2} << 20) + 1000;

}  // namespace

TEST_CASE("remote read, write and stat of an export on the caller's own rank", "[remote_io]") {
    // The file I/O back end is chosen when rio starts.
    std::optional<std::string> back_end;
    SECTION("io_uring, or threads where the kernel refuses it") {}
    SECTION("pread/pwrite threads") {
        back_end = "threads";
    }
    ScopedEnv env("VIADUCT_RIO_FILE_IO", back_end);
    ScratchFile file(kFileLen, kSeed);
    LocalRio local;
    uint64_t handle = 0;
    REQUIRE(rio_export(local.rio(), file.path(), kBase, kLength, RIO_EXPORT_READ_WRITE, &handle) ==
            MSG_OK);
    CHECK(handle != 0);

    uint64_t length = 0;
    int flags = -1;
    REQUIRE(rio_stat(local.rio(), 0, handle, &length, &flags) == RIO_OK);
    CHECK(length == kLength);
    CHECK(flags == RIO_EXPORT_READ_WRITE);

    // The whole range, then a piece of it asynchronously, at an offset within it.
    std::vector<uint8_t> buf(kLength);
    size_t moved = 0;
    REQUIRE(rio_read_sync(local.rio(), 0, handle, 0, buf.data(), buf.size(), &moved) == RIO_OK);
    CHECK(moved == kLength);
    CHECK(buf == riounit::pattern(kLength, kSeed, kBase));
    std::vector<uint8_t> piece(1000);
    int cookie = 0;
    REQUIRE(rio_read(local.rio(), 0, handle, 12345, piece.data(), piece.size(), local.cq(),
                     &cookie) == MSG_OK);
    msg_completion_t c = riounit::next_completion(local.cq());
    CHECK(c.op == RIO_OP_REPLY);
    CHECK(c.status == RIO_OK);
    CHECK(c.bytes == piece.size());
    CHECK(c.cookie == &cookie);
    CHECK(piece == riounit::pattern(piece.size(), kSeed, kBase + 12345));

    // Writes, small (inline) and large (its own tag), land in the file where the range says.
    for (size_t len : {size_t{17}, size_t{1} << 20}) {
        INFO("write of " << len);
        const uint64_t at = kLength - len;
        std::vector<uint8_t> data = riounit::pattern(len, kSeed + len);
        REQUIRE(rio_write_sync(local.rio(), 0, handle, at, data.data(), len) == RIO_OK);
        CHECK(file.read_back(kBase + at, len) == data);
        std::vector<uint8_t> back(len);
        REQUIRE(rio_read_sync(local.rio(), 0, handle, at, back.data(), len, &moved) == RIO_OK);
        CHECK(moved == len);
        CHECK(back == data);
    }
    // Bytes just outside the range are untouched.
    CHECK(file.read_back(kBase + kLength, 64) == riounit::pattern(64, kSeed, kBase + kLength));

    // A read sent from the page cache is counted once its send is issued,
    // which may be after the requester has it; a request the shadow thread
    // takes after that one orders the count before the check.
    REQUIRE(rio_stat(local.rio(), 0, handle, &length, &flags) == RIO_OK);
    rio_stats_t s = local.stats();
    CHECK(s.bytes_written == 17 + (size_t{1} << 20));
    CHECK(s.bytes_read == kLength + 1000 + 17 + (size_t{1} << 20));
}

TEST_CASE("remote I/O stays within the export and its rights", "[remote_io]") {
    ScratchFile file(kFileLen, kSeed);
    LocalRio local;
    uint64_t handle = 0;
    REQUIRE(rio_export(local.rio(), file.path(), kBase, RIO_EXPORT_TO_END, RIO_EXPORT_READ_ONLY,
                       &handle) == MSG_OK);
    const uint64_t length = kFileLen - kBase;
    uint64_t got = 0;
    int flags = -1;
    REQUIRE(rio_stat(local.rio(), 0, handle, &got, &flags) == RIO_OK);
    CHECK(got == length);
    CHECK(flags == RIO_EXPORT_READ_ONLY);

    std::vector<uint8_t> buf(4096);
    size_t moved = 1;
    CHECK(rio_read_sync(local.rio(), 0, handle, length - 10, buf.data(), 10, &moved) == RIO_OK);
    CHECK(moved == 10);
    CHECK(rio_read_sync(local.rio(), 0, handle, length - 10, buf.data(), 11, nullptr) ==
          RIO_ERR_RANGE);
    CHECK(rio_read_sync(local.rio(), 0, handle, length + 1, buf.data(), 0, nullptr) ==
          RIO_ERR_RANGE);
    CHECK(rio_read_sync(local.rio(), 0, handle, UINT64_MAX, buf.data(), 1, nullptr) ==
          RIO_ERR_RANGE);
    CHECK(rio_read_sync(local.rio(), 0, handle, 0, buf.data(), 0, &moved) == RIO_OK);
    CHECK(moved == 0);
    CHECK(rio_write_sync(local.rio(), 0, handle, 0, buf.data(), 1) == RIO_ERR_READ_ONLY);
    CHECK(file.read_back(kBase, 1) == riounit::pattern(1, kSeed, kBase));

    // A file that shrank under its export: short data is an error, never data.
    file.truncate(kBase + 100);
    CHECK(rio_read_sync(local.rio(), 0, handle, 0, buf.data(), 200, nullptr) == RIO_ERR_IO);
    CHECK(rio_read_sync(local.rio(), 0, handle, 0, buf.data(), 100, &moved) == RIO_OK);
    CHECK(moved == 100);
}
