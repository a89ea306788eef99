// viaduct::Uring on real files: what is written is read back byte for byte, with io_uring
// and with the pread/pwrite threads it falls back to.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "viaduct/uring.hpp"

namespace {

// A temporary file, removed at scope end.
class TempFile {
  public:
    TempFile() {
        const char *dir = std::getenv("TMPDIR");
        std::string templ = std::string(dir != nullptr && *dir ? dir : "/tmp") + "/uring-XXXXXX";
        fd_ = ::mkstemp(templ.data());
        REQUIRE(fd_ >= 0);
        path_ = templ;
    }
    ~TempFile() {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    TempFile(const TempFile &) = delete;
    TempFile &operator=(const TempFile &) = delete;
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
    std::string path_;
};

std::vector<char> pattern(std::size_t n, unsigned seed) {
    std::vector<char> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<char>((i * 131 + seed * 7 + i / 251) & 0xff);
    return v;
}

// Runs every op to completion through wait(), resubmitting the rest of a short transfer.
void run_all(viaduct::Uring &ring, std::vector<viaduct::UringOp> &ops) {
    for (auto &op : ops) {
        op.user = &op;
        ring.submit(&op);
    }
    std::size_t left = ops.size();
    while (left > 0) {
        viaduct::UringOp *op = ring.wait();
        REQUIRE(op != nullptr);
        REQUIRE(op->result > 0);
        const auto moved = static_cast<std::size_t>(op->result);
        if (moved < op->len) {
            op->buf = static_cast<char *>(op->buf) + moved;
            op->len -= moved;
            op->offset += moved;
            ring.submit(op);
            continue;
        }
        --left;
    }
}

// Writes `data` in `pieces` concurrent transfers at `base`, then reads it back the same way.
std::vector<char> write_then_read(viaduct::Uring &ring, int fd, const std::vector<char> &data,
                                  std::size_t pieces, std::uint64_t base) {
    const std::size_t piece = (data.size() + pieces - 1) / pieces;
    std::vector<char> out(data.size());
    std::vector<char> src = data;
    for (bool write : {true, false}) {
        std::vector<viaduct::UringOp> ops;
        for (std::size_t at = 0; at < data.size(); at += piece) {
            viaduct::UringOp op;
            op.fd = fd;
            op.buf = (write ? src.data() : out.data()) + at;
            op.len = std::min(piece, data.size() - at);
            op.offset = base + at;
            op.write = write;
            ops.push_back(op);
        }
        run_all(ring, ops);
    }
    return out;
}

}  // namespace

TEST_CASE("transfers through either back end move the bytes exactly", "[uring]") {
    auto backend = viaduct::Uring::Backend::automatic;
    std::string expect_name;
    SECTION("io_uring, or threads where the kernel refuses it") {}
    SECTION("pread/pwrite threads when asked for") {
        backend = viaduct::Uring::Backend::threads;
        expect_name = "threads";
    }
    auto ring = viaduct::Uring::open(8, backend);
    REQUIRE(ring != nullptr);
    const std::string name = ring->name();
    CHECK((name == "io_uring" || name == "threads"));
    if (!expect_name.empty()) CHECK(name == expect_name);

    TempFile file;
    const std::vector<char> data = pattern((std::size_t{1} << 20) + 333, 5);
    const std::uint64_t base = 4096 + 17;
    CHECK(write_then_read(*ring, file.fd(), data, 8, base) == data);

    // What the file holds, read without the ring.
    std::vector<char> direct(data.size());
    REQUIRE(::pread(file.fd(), direct.data(), direct.size(), static_cast<off_t>(base)) ==
            static_cast<ssize_t>(direct.size()));
    CHECK(direct == data);
    std::vector<char> head(base, 'x');
    REQUIRE(::pread(file.fd(), head.data(), head.size(), 0) == static_cast<ssize_t>(base));
    CHECK(head == std::vector<char>(base, '\0'));  // the hole before base stayed empty
}

TEST_CASE("errors and the end of a file come back as results", "[uring]") {
    auto backend = GENERATE(viaduct::Uring::Backend::automatic, viaduct::Uring::Backend::threads);
    auto ring = viaduct::Uring::open(2, backend);
    TempFile file;
    REQUIRE(::pwrite(file.fd(), "abc", 3, 0) == 3);
    char buf[8] = {};

    viaduct::UringOp past_end;
    past_end.fd = file.fd();
    past_end.buf = buf;
    past_end.len = sizeof buf;
    past_end.offset = 100;
    ring->submit(&past_end);
    CHECK(ring->wait() == &past_end);
    CHECK(past_end.result == 0);

    viaduct::UringOp short_read = past_end;
    short_read.offset = 1;
    ring->submit(&short_read);
    CHECK(ring->wait() == &short_read);
    CHECK(short_read.result == 2);
    CHECK(std::string(buf, 2) == "bc");

    viaduct::UringOp bad_fd = past_end;
    bad_fd.fd = -1;
    ring->submit(&bad_fd);
    CHECK(ring->wait() == &bad_fd);
    CHECK(bad_fd.result == -EBADF);
    CHECK(ring->poll() == nullptr);
}

TEST_CASE("wake ends a wait that has nothing to take", "[uring]") {
    auto backend = GENERATE(viaduct::Uring::Backend::automatic, viaduct::Uring::Backend::threads);
    auto ring = viaduct::Uring::open(4, backend);
    ring->wake();
    CHECK(ring->wait() == nullptr);
    // A finished transfer is taken before a wake-up that came after it.
    TempFile file;
    char byte = 'z';
    viaduct::UringOp op;
    op.fd = file.fd();
    op.buf = &byte;
    op.len = 1;
    op.write = true;
    ring->submit(&op);
    viaduct::UringOp *got = ring->wait();
    CHECK(got == &op);
    CHECK(op.result == 1);
    ring->wake();
    CHECK(ring->wait() == nullptr);
}
