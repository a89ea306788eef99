// FileIo: the shadow thread submits to a viaduct::Uring, a reaper thread waits for
// completions and posts them to the shadow thread's CQ. VIADUCT_RIO_FILE_IO=threads
// asks for the pread/pwrite threads even where io_uring is available.
#include "file_io.hpp"

#include "viaduct/env.hpp"

namespace remoteio {

namespace {

IoRequest *finished(viaduct::UringOp *op) {
    auto *req = static_cast<IoRequest *>(op->user);
    req->result = op->result;
    return req;
}

}  // namespace

std::unique_ptr<FileIo> FileIo::create(msg_cq_t *done, int depth) {
    const bool threads_only = viaduct::env::text("VIADUCT_RIO_FILE_IO") == "threads";
    const auto backend =
        threads_only ? viaduct::Uring::Backend::threads : viaduct::Uring::Backend::automatic;
    return std::make_unique<FileIo>(
        done, viaduct::Uring::open(static_cast<unsigned>(depth < 1 ? 1 : depth), backend));
}

FileIo::FileIo(msg_cq_t *done, std::unique_ptr<viaduct::Uring> ring)
    : done_(done), ring_(std::move(ring)) {
    reaper_ = std::thread([this] { reap(); });
}

FileIo::~FileIo() {
    ring_->wake();
    reaper_.join();
}

void FileIo::submit(IoRequest *req) {
    req->op = viaduct::UringOp{.fd = req->fd,
                               .buf = req->buf,
                               .len = req->len,
                               .offset = req->offset,
                               .write = req->write,
                               .result = 0,
                               .user = req};
    ring_->submit(&req->op);
}

IoRequest *FileIo::poll() {
    viaduct::UringOp *op = ring_->poll();
    return op != nullptr ? finished(op) : nullptr;
}

void FileIo::reap() {
    while (viaduct::UringOp *op = ring_->wait()) {
        msg_completion_t c{};
        c.op = MSG_OP_USER;
        c.cookie = &finished(op)->part;
        msg_cq_post(done_, &c);
    }
}

}  // namespace remoteio
