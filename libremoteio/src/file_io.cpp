// FileIo's two back ends. io_uring: the shadow thread submits, a reaper
// thread waits for completions and posts them. Fallback (io_uring refused, as
// under some container seccomp profiles): worker threads with pread/pwrite.
#include "file_io.hpp"

#include <liburing.h>
#include <sys/eventfd.h>
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
        if (io_uring_queue_init(static_cast<unsigned>(depth), &ring_, 0) != 0) return false;
        efd_ = eventfd(0, EFD_CLOEXEC);
        if (efd_ < 0 || io_uring_register_eventfd(&ring_, efd_) != 0) {
            if (efd_ >= 0) close(efd_);
            io_uring_queue_exit(&ring_);
            return false;
        }
        started_ = true;
        reaper_ = std::thread([this] { reap(); });
        return true;
    }
    ~UringIo() override {
        if (!started_) return;
        stop_ = true;
        uint64_t one = 1;
        while (write(efd_, &one, sizeof one) < 0 && errno == EINTR) {
        }
        reaper_.join();
        io_uring_unregister_eventfd(&ring_);
        close(efd_);
        io_uring_queue_exit(&ring_);
    }
    void submit(IoRequest *req) override {
        req->handoff.fetch_add(1, std::memory_order_release);
        io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
        while (sqe == nullptr) {  // the shadow thread keeps depth within the ring
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
    IoRequest *poll() override { return take(); }
    const char *name() const override { return "io_uring"; }

  private:
    // The kernel counts each completion on the eventfd; the reaper sleeps on
    // it, and completions are taken under the lock by the reaper or by the
    // submitting thread's poll, whichever comes first. Only the eventfd is
    // ever waited on, so no ring access happens outside the lock.
    void reap() {
        for (;;) {
            uint64_t count = 0;
            ssize_t n = read(efd_, &count, sizeof count);
            if (n < 0 && errno == EINTR) continue;
            if (stop_ || n < 0) return;
            while (IoRequest *req = take()) post_done(done_, req);
        }
    }

    IoRequest *take() {
        std::lock_guard<std::mutex> lk(mu_);
        io_uring_cqe *cqe = nullptr;
        if (io_uring_peek_cqe(&ring_, &cqe) != 0 || cqe == nullptr) return nullptr;
        auto *req = static_cast<IoRequest *>(io_uring_cqe_get_data(cqe));
        int res = cqe->res;
        io_uring_cqe_seen(&ring_, cqe);
        req->handoff.load(std::memory_order_acquire);
        req->result = res;
        return req;
    }

    msg_cq_t *done_;
    std::mutex mu_;
    io_uring ring_{};
    int efd_ = -1;
    bool started_ = false;
    std::atomic<bool> stop_{false};
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
