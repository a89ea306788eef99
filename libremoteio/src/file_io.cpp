// FileIo's two back ends. io_uring: the shadow thread submits, a reaper
// thread waits for completions and posts them. Fallback (io_uring refused, as
// under some container seccomp profiles): worker threads with pread/pwrite.
#include "file_io.hpp"

#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace remoteio {

namespace {

void post_done(msg_cq_t *done, IoRequest *req) {
    msg_completion_t c{};
    c.op = MSG_OP_USER;
    c.cookie = &req->part;
    msg_cq_post(done, &c);
}

class UringIo final : public FileIo {
  public:
    explicit UringIo(msg_cq_t *done) : done_(done) {}
    bool start(int depth) {
        if (io_uring_queue_init(static_cast<unsigned>(depth + 1), &ring_, 0) != 0) return false;
        started_ = true;
        reaper_ = std::thread([this] { reap(); });
        return true;
    }
    ~UringIo() override {
        if (!started_) return;
        // A no-op with no owner tells the reaper to stop.
        io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
        while (sqe == nullptr) {
            io_uring_submit(&ring_);
            sqe = io_uring_get_sqe(&ring_);
        }
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data(sqe, nullptr);
        io_uring_submit(&ring_);
        reaper_.join();
        io_uring_queue_exit(&ring_);
    }
    void submit(IoRequest *req) override {
        req->handoff.fetch_add(1, std::memory_order_release);
        io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
        while (sqe == nullptr) {  // the shadow thread keeps depth below the ring size
            io_uring_submit(&ring_);
            sqe = io_uring_get_sqe(&ring_);
        }
        if (req->write)
            io_uring_prep_write(sqe, req->fd, req->buf, static_cast<unsigned>(req->len),
                                req->offset);
        else
            io_uring_prep_read(sqe, req->fd, req->buf, static_cast<unsigned>(req->len),
                               req->offset);
        io_uring_sqe_set_data(sqe, req);
        io_uring_submit(&ring_);
    }
    const char *name() const override { return "io_uring"; }

    IoRequest *poll() override {
        IoRequest *req = nullptr;
        take(&req);
        return req;
    }

  private:
    // The reaper only waits outside the lock; completions are taken under it,
    // by the reaper or by the submitting thread's poll, whichever comes first.
    void reap() {
        for (;;) {
            io_uring_cqe *cqe = nullptr;
            int rc = io_uring_wait_cqe(&ring_, &cqe);
            if (rc == -EINTR) continue;
            if (rc < 0) return;
            IoRequest *req = nullptr;
            for (;;) {
                int got = take(&req);
                if (got == 0) break;
                if (got < 0) return;  // the stop marker
                post_done(done_, req);
            }
        }
    }

    // 1: *req is a finished transfer; 0: nothing there; -1: the stop marker.
    int take(IoRequest **req) {
        std::lock_guard<std::mutex> lk(mu_);
        io_uring_cqe *cqe = nullptr;
        if (io_uring_peek_cqe(&ring_, &cqe) != 0 || cqe == nullptr) return 0;
        auto *r = static_cast<IoRequest *>(io_uring_cqe_get_data(cqe));
        int res = cqe->res;
        if (r == nullptr) {
            // Leave the marker for the reaper.
            if (std::this_thread::get_id() != reaper_.get_id()) return 0;
            io_uring_cqe_seen(&ring_, cqe);
            return -1;
        }
        io_uring_cqe_seen(&ring_, cqe);
        r->handoff.load(std::memory_order_acquire);
        r->result = res;
        *req = r;
        return 1;
    }

    msg_cq_t *done_;
    std::mutex mu_;
    io_uring ring_{};
    bool started_ = false;
    std::thread reaper_;
};

class ThreadIo final : public FileIo {
  public:
    ThreadIo(msg_cq_t *done, int threads) : done_(done) {
        for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
    }
    ~ThreadIo() override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        for (std::thread &t : workers_) t.join();
    }
    void submit(IoRequest *req) override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            queue_.push_back(req);
        }
        cv_.notify_one();
    }
    const char *name() const override { return "threads"; }

  private:
    void work() {
        for (;;) {
            IoRequest *req;
            {
                std::unique_lock<std::mutex> lk(mu_);
                cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
                if (queue_.empty()) return;
                req = queue_.front();
                queue_.pop_front();
            }
            auto off = static_cast<off_t>(req->offset);
            ssize_t n = req->write ? pwrite(req->fd, req->buf, req->len, off)
                                   : pread(req->fd, req->buf, req->len, off);
            req->result = n < 0 ? -errno : n;
            post_done(done_, req);
        }
    }

    msg_cq_t *done_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<IoRequest *> queue_;
    bool stop_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<FileIo> FileIo::create(msg_cq_t *done, int depth) {
    const char *force = getenv("VIADUCT_RIO_FILE_IO");
    bool threads_only = force != nullptr && std::string_view(force) == "threads";
    if (!threads_only) {
        auto uring = std::make_unique<UringIo>(done);
        if (uring->start(depth)) return uring;
    }
    return std::make_unique<ThreadIo>(done, depth < 8 ? depth : 8);
}

}  // namespace remoteio
