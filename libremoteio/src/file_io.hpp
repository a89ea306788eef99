// The shadow thread's local asynchronous file I/O: io_uring where the kernel
// allows it, else a few threads doing pread/pwrite. Either way a finished
// transfer comes back as an entry on the shadow thread's CQ.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "msg/msg.h"
#include "parts.hpp"

namespace remoteio {

struct IoRequest {
    Part part{PartKind::FileIo, nullptr};
    int fd = -1;
    char *buf = nullptr;
    size_t len = 0;
    uint64_t offset = 0;
    bool write = false;
    ssize_t result = 0;  // bytes moved by this one transfer, or -errno
    // Published by the submitter and read by the completing thread: the
    // kernel ring in between is invisible to ThreadSanitizer.
    std::atomic<int> handoff{0};
};

class FileIo {
  public:
    // Completed requests are posted to `done` (op MSG_OP_USER, cookie = &req->part).
    static std::unique_ptr<FileIo> create(msg_cq_t *done, int depth);
    virtual ~FileIo() = default;
    // One transfer (it may move fewer bytes than asked). Called by one thread only.
    virtual void submit(IoRequest *req) = 0;
    // A transfer already finished (a page-cache hit often completes during
    // submit), taken here instead of through the CQ; null if none.
    virtual IoRequest *poll() { return nullptr; }
    virtual const char *name() const = 0;
};

}  // namespace remoteio
