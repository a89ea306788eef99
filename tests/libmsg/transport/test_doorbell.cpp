// Doorbell names arrive from peers: a name too long for a socket address or
// with characters that would reach another path is refused before any use,
// and real names still ring.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "transport/host/doorbell.hpp"

namespace {

using msg::Doorbell;

std::vector<uint8_t> bytes(const std::string &s) {
    return {s.begin(), s.end()};
}

// A /dev/shm object named as the doorbell of `id` would be, so that connect
// gets past shm_open and would go on to build the socket address.
class FakeFlag {
  public:
    explicit FakeFlag(const std::string &id) : name_("/viaduct-db-" + id) {
        int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(ftruncate(fd, 4096) == 0);
        close(fd);
    }
    ~FakeFlag() { shm_unlink(name_.c_str()); }
    FakeFlag(const FakeFlag &) = delete;
    FakeFlag &operator=(const FakeFlag &) = delete;

  private:
    std::string name_;
};

bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
}

}  // namespace

TEST_CASE("a doorbell name longer than a socket address holds is refused", "[doorbell]") {
    Doorbell self;
    std::string why;
    REQUIRE(self.open(&why));
    // 11 + 240 characters: a valid /dev/shm name, but far past sun_path's 108 bytes.
    const std::string id(240, 'a');
    FakeFlag flag(id);
    std::string error;
    CHECK(self.connect({self.name(), bytes(id)}, 0, &error) == -EINVAL);
    CHECK(error.find("rank 1") != std::string::npos);
    CHECK(error.find("doorbell") != std::string::npos);
    // Just over the accepted length is refused too, short of any overflow.
    error.clear();
    CHECK(self.connect({self.name(), bytes(std::string(Doorbell::kMaxName + 1, 'b'))}, 0, &error) ==
          -EINVAL);
    CHECK(!error.empty());
}

TEST_CASE("a doorbell name with characters outside hex digits is refused", "[doorbell]") {
    Doorbell self;
    std::string why;
    REQUIRE(self.open(&why));
    for (const std::string &bad :
         {std::string("../../tmp/x"), std::string("abc/def"), std::string("ABCDEF"),
          std::string("12\0"
                      "34",
                      5),
          std::string("0123 4567")}) {
        INFO("name '" << bad << "'");
        std::string error;
        CHECK(self.connect({bytes(bad), self.name()}, 1, &error) == -EINVAL);
        CHECK(error.find("rank 0") != std::string::npos);
    }
}

TEST_CASE("real doorbell names pass and ring; an unknown one is left to polling", "[doorbell]") {
    Doorbell a, b;
    std::string why;
    REQUIRE(a.open(&why));
    REQUIRE(b.open(&why));
    CHECK(Doorbell::check_name(a.name()) == nullptr);
    std::string error;
    // Rank 2 names no doorbell on this host: not an error, it is polled.
    const std::vector<std::vector<uint8_t>> names = {a.name(), b.name(),
                                                     bytes("0123456789abcdef01234567")};
    REQUIRE(a.connect(names, 0, &error) == 0);
    REQUIRE(b.connect(names, 1, &error) == 0);
    CHECK(error.empty());
    a.prepare_sleep();
    b.ring(0);
    CHECK(readable(a.fd()));
    a.woke();
    CHECK(!readable(a.fd()));
    b.ring(2);  // nobody to ring: nothing happens
}
