// The DataPump's disk I/O: many reads or writes in flight on one file, by
// io_uring where the kernel allows it, else by threads doing pread/pwrite.
// One thread submits and waits; a finished request has moved all its bytes,
// met the end of the file (reads), or carries an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pump {

struct IoRequest {
    int fd = -1;
    uint8_t *buf = nullptr;
    size_t len = 0;
    uint64_t offset = 0;
    bool write = false;
    size_t done = 0;  // bytes moved
    int error = 0;    // errno
    bool finished = false;
    void *user = nullptr;
};

class DiskIo {
  public:
    // kind: "uring", "threads" or "auto" (io_uring, else threads). Null with *why if neither.
    static std::unique_ptr<DiskIo> create(const std::string &kind, unsigned depth,
                                          std::string *why);
    virtual ~DiskIo() = default;
    virtual void submit(IoRequest *r) = 0;
    // Blocks for one finished request; null when nothing is in flight.
    virtual IoRequest *wait() = 0;
    virtual const char *name() const = 0;
};

}  // namespace pump
