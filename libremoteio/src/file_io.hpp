// The shadow thread's local asynchronous file I/O on viaduct::Uring (io_uring
// where the kernel allows it, else a few threads doing pread/pwrite). Either
// way a finished transfer comes back as an entry on the shadow thread's CQ.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <thread>

#include "msg/msg.h"
#include "parts.hpp"
#include "viaduct/uring.hpp"

namespace remoteio {

struct IoRequest {
    Part part{PartKind::FileIo, nullptr};
    int fd = -1;
    char *buf = nullptr;
    size_t len = 0;
    uint64_t offset = 0;
    bool write = false;
    ssize_t result = 0;   // bytes moved by this one transfer, or -errno
    viaduct::UringOp op;  // the transfer as the ring sees it
};

class FileIo {
  public:
    // Completed requests are posted to `done` (op MSG_OP_USER, cookie = &req->part).
    static std::unique_ptr<FileIo> create(msg_cq_t *done, int depth);
    FileIo(msg_cq_t *done, std::unique_ptr<viaduct::Uring> ring);
    ~FileIo();
    FileIo(const FileIo &) = delete;
    FileIo &operator=(const FileIo &) = delete;
    // One transfer (it may move fewer bytes than asked). Called by one thread only.
    void submit(IoRequest *req);
    // A transfer already finished (a page-cache hit often completes during
    // submit), taken here instead of through the CQ; null if none.
    IoRequest *poll();
    const char *name() const { return ring_->name(); }

  private:
    void reap();

    msg_cq_t *done_;
    std::unique_ptr<viaduct::Uring> ring_;
    std::thread reaper_;
};

}  // namespace remoteio
