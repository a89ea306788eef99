// DiskIo on viaduct::Uring (common/): io_uring where the kernel allows it, else pread/pwrite
// threads. This layer only continues short transfers until a request has moved all its
// bytes, met the end of the file (reads) or failed, and keeps the count of what is in flight.
#include "pump_io.hpp"

#include <cerrno>
#include <vector>

#include "viaduct/uring.hpp"

namespace pump {

namespace {

class UringDiskIo final : public DiskIo {
  public:
    UringDiskIo(std::unique_ptr<viaduct::Uring> ring, unsigned depth)
        : ring_(std::move(ring)), ops_(depth) {
        for (viaduct::UringOp &op : ops_) free_.push_back(&op);
    }
    ~UringDiskIo() override {
        // Requests in flight point into the caller's buffers: finish them first.
        while (wait() != nullptr) {
        }
    }
    void submit(IoRequest *r) override {
        r->done = 0;
        r->error = 0;
        r->finished = false;
        ++in_flight_;
        push(r);
    }
    IoRequest *wait() override {
        while (in_flight_ > 0) {
            viaduct::UringOp *op = ring_->wait();
            if (op == nullptr) continue;
            auto *r = static_cast<IoRequest *>(op->user);
            const ssize_t res = op->result;
            free_.push_back(op);
            if (res == -EINTR || res == -EAGAIN) {
                push(r);
                continue;
            }
            if (res < 0) {
                r->error = static_cast<int>(-res);
            } else if (res == 0) {
                if (r->write) r->error = EIO;  // a write that moves nothing; a read at the end
            } else if ((r->done += static_cast<size_t>(res)) < r->len) {
                push(r);  // a short transfer: the rest
                continue;
            }
            r->finished = true;
            --in_flight_;
            return r;
        }
        return nullptr;
    }
    const char *name() const override { return ring_->name(); }

  private:
    // The caller keeps at most `depth` requests in flight, so an op is always free.
    void push(IoRequest *r) {
        viaduct::UringOp *op = free_.back();
        free_.pop_back();
        *op = viaduct::UringOp{};
        op->fd = r->fd;
        op->buf = r->buf + r->done;
        op->len = r->len - r->done;
        op->offset = r->offset + r->done;
        op->write = r->write;
        op->user = r;
        ring_->submit(op);
    }

    std::unique_ptr<viaduct::Uring> ring_;
    std::vector<viaduct::UringOp> ops_;
    std::vector<viaduct::UringOp *> free_;
    unsigned in_flight_ = 0;
};

}  // namespace

std::unique_ptr<DiskIo> DiskIo::create(const std::string &kind, unsigned depth, std::string *why) {
    if (depth == 0) depth = 1;
    if (kind != "auto" && kind != "uring" && kind != "threads") {
        *why = "unknown I/O back end '" + kind + "'";
        return nullptr;
    }
    auto ring = viaduct::Uring::open(depth, kind == "threads" ? viaduct::Uring::Backend::threads
                                                              : viaduct::Uring::Backend::automatic);
    if (ring == nullptr) {
        *why = "cannot start asynchronous file I/O";
        return nullptr;
    }
    if (kind == "uring" && std::string(ring->name()) != "io_uring") {
        *why = "io_uring is not available here (--io threads uses pread/pwrite threads)";
        return nullptr;
    }
    return std::make_unique<UringDiskIo>(std::move(ring), depth);
}

}  // namespace pump
