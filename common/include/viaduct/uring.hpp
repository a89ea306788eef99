// Asynchronous pread/pwrite: io_uring where the kernel allows it, else a few threads doing
// pread/pwrite (io_uring missing, or refused as under some container seccomp profiles).
// sortapp's IoRing and libremoteio's shadow-thread file I/O are both built on it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace viaduct {

// One transfer; like pread/pwrite it may move fewer bytes than asked.
struct UringOp {
    int fd = -1;
    void *buf = nullptr;
    std::size_t len = 0;
    std::uint64_t offset = 0;
    bool write = false;
    ssize_t result = 0;    // bytes moved, or -errno
    void *user = nullptr;  // the caller's own
};

class Uring {
  public:
    enum class Backend {
        automatic,  // io_uring, or threads where it cannot be had
        threads,    // pread/pwrite threads only
    };
    // A queue for up to `depth` transfers in flight at once.
    static std::unique_ptr<Uring> open(unsigned depth, Backend backend = Backend::automatic);
    virtual ~Uring() = default;

    // Starts a transfer; the op must stay alive until it is handed back. One thread at a time.
    virtual void submit(UringOp *op) = 0;
    // A finished transfer, or null if none has finished yet.
    virtual UringOp *poll() = 0;
    // Blocks until a transfer finishes and returns it; null once wake() was called for it.
    virtual UringOp *wait() = 0;
    // Makes one wait(), now or the next, return null (to stop a thread that waits).
    virtual void wake() = 0;
    // "io_uring" or "threads".
    virtual const char *name() const = 0;
};

}  // namespace viaduct
