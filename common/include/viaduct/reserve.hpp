// Reserving a file's space on disk before writing it (fallocate).
#pragma once

#include <fcntl.h>

#include <cerrno>
#include <cstdint>

namespace viaduct {

// Allocates the first `bytes` of the file open as `fd` and makes it at least that long: a
// disk too small fails now, and direct writes into it neither allocate nor extend it (ext4
// then takes them side by side). 0, or the errno that refused it; a file system without
// fallocate is left alone (0). Not posix_fallocate: there it would write every byte.
inline int reserve_space(int fd, std::uint64_t bytes) {
    if (bytes == 0 || ::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) == 0) return 0;
    const int err = errno;
    return err == EOPNOTSUPP || err == ENOSYS ? 0 : err;
}

}  // namespace viaduct
