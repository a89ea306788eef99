// /dev/shm's free space and the reservation of the shm provider's region.
#include "transport/ofi/shm_region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "viaduct/host_memory.hpp"

namespace msg {

namespace {

struct ShmSpace {
    bool known = false;
    int err = 0;  // statvfs's, when not known
    uint64_t free = 0, size = 0;
};

ShmSpace shm_space() {
    ShmSpace s;
    struct statvfs v {};
    if (statvfs(kShmDir, &v) != 0) {
        s.err = errno;
        return s;
    }
    s.known = true;
    s.free = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
    s.size = static_cast<uint64_t>(v.f_blocks) * v.f_frsize;
    return s;
}

std::string text_of(const ShmSpace &s) {
    using viaduct::mib;
    if (!s.known)
        return std::string(kShmDir) + "'s free space is unknown (" + strerror(s.err) + ")";
    return std::string(kShmDir) + " has " + mib(static_cast<double>(s.free)) + " free of " +
           mib(static_cast<double>(s.size));
}

}  // namespace

std::string shm_space_text() {
    return text_of(shm_space());
}

std::string shm_refusal() {
    const ShmSpace s = shm_space();
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (!s.known || cpus < 1) return {};
    const uint64_t asked = kShmRegionBytes * static_cast<uint64_t>(cpus);
    if (s.free >= asked) return {};
    return "not enough shared memory for libfabric's shm provider: " + text_of(s) +
           ", and it asks for room for one " + viaduct::mib(static_cast<double>(kShmRegionBytes)) +
           " region per online CPU (" + std::to_string(cpus) +
           " here: " + viaduct::mib(static_cast<double>(asked)) + "); free space in " + kShmDir +
           " or raise its size";
}

int reserve_shm_region(const std::string &name, std::string *error) {
    const std::string what = "the shm provider's region " + std::string(kShmDir) + "/" + name;
    int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        const int err = errno;
        *error = "cannot open " + what + " to reserve its space: " + strerror(err);
        return -err;
    }
    struct stat st {};
    int rc = fstat(fd, &st) == 0 ? 0 : errno;
    // posix_fallocate returns its error rather than setting errno.
    if (rc == 0 && st.st_size > 0) rc = posix_fallocate(fd, 0, st.st_size);
    ::close(fd);
    if (rc == 0) return 0;
    *error = "cannot reserve the " + viaduct::mib(static_cast<double>(st.st_size)) + " of " + what +
             ": " + strerror(rc) + " (" + shm_space_text() + ")";
    return -rc;
}

}  // namespace msg
