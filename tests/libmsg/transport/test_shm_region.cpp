// The shm provider's region has its space taken in /dev/shm when it is made: a region that
// fits is allocated to its last page, and one /dev/shm cannot hold is an error that names the
// region, /dev/shm and its free space.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

#include "transport/ofi/shm_region.hpp"

namespace {

// A sparse /dev/shm object of `size` bytes, as the provider leaves its region.
class SparseRegion {
  public:
    explicit SparseRegion(off_t size) : name_("viaduct-unit-" + std::to_string(getpid())) {
        int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(ftruncate(fd, size) == 0);
        close(fd);
    }
    ~SparseRegion() { shm_unlink(name_.c_str()); }
    SparseRegion(const SparseRegion &) = delete;
    SparseRegion &operator=(const SparseRegion &) = delete;

    const std::string &name() const { return name_; }
    // Bytes of memory the object holds now.
    off_t allocated() const {
        struct stat st {};
        REQUIRE(stat(("/dev/shm/" + name_).c_str(), &st) == 0);
        return st.st_blocks * 512;
    }

  private:
    std::string name_;
};

}  // namespace

TEST_CASE("a region that fits is allocated whole", "[shm_region]") {
    SparseRegion region(1 << 20);
    REQUIRE(region.allocated() == 0);
    std::string error;
    CHECK(msg::reserve_shm_region(region.name(), &error) == 0);
    CHECK(error.empty());
    CHECK(region.allocated() >= (1 << 20));
}

TEST_CASE("a region larger than /dev/shm is a named error", "[shm_region]") {
    struct statvfs v {};
    REQUIRE(statvfs("/dev/shm", &v) == 0);
    // tmpfs refuses at once a reservation larger than its whole size; a /dev/shm with no
    // size limit would try to allocate it.
    if (v.f_blocks == 0) {
        WARN("/dev/shm has no size limit: not tried");
        return;
    }
    const off_t total = static_cast<off_t>(v.f_blocks * v.f_frsize);
    SparseRegion region(2 * total);
    std::string error;
    CHECK(msg::reserve_shm_region(region.name(), &error) == -ENOSPC);
    INFO(error);
    CHECK(error.find("/dev/shm/" + region.name()) != std::string::npos);
    CHECK(error.find("/dev/shm has ") != std::string::npos);
    CHECK(error.find(" free of ") != std::string::npos);
    CHECK(region.allocated() == 0);
}
