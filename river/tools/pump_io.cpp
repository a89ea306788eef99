// DiskIo's two back ends. io_uring: requests go to the ring, short transfers
// are continued there. Fallback (io_uring refused, as under some container
// seccomp profiles, or asked for): threads doing pread/pwrite.
#include "pump_io.hpp"

#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace pump {

namespace {

class UringIo final : public DiskIo {
  public:
    bool start(unsigned depth) {
        ready_ = io_uring_queue_init(depth, &ring_, 0) == 0;
        return ready_;
    }
    ~UringIo() override {
        if (!ready_) return;
        // Requests in flight point into the caller's buffers: finish them first.
        while (wait() != nullptr) {
        }
        io_uring_queue_exit(&ring_);
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
            io_uring_cqe *cqe = nullptr;
            const int rc = io_uring_wait_cqe(&ring_, &cqe);
            if (rc == -EINTR) continue;
            if (rc < 0) {
                std::fprintf(stderr, "datapump: io_uring_wait_cqe failed (errno %d)\n", -rc);
                std::abort();  // the ring itself is broken: nothing can be finished
            }
            auto *r = static_cast<IoRequest *>(io_uring_cqe_get_data(cqe));
            const int res = cqe->res;
            io_uring_cqe_seen(&ring_, cqe);
            if (res == -EINTR || res == -EAGAIN) {
                push(r);
                continue;
            }
            if (res < 0) {
                r->error = -res;
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
    const char *name() const override { return "io_uring"; }

  private:
    void push(IoRequest *r) {
        io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
        while (sqe == nullptr) {
            io_uring_submit(&ring_);
            sqe = io_uring_get_sqe(&ring_);
        }
        const auto len = static_cast<unsigned>(r->len - r->done);
        if (r->write)
            io_uring_prep_write(sqe, r->fd, r->buf + r->done, len, r->offset + r->done);
        else
            io_uring_prep_read(sqe, r->fd, r->buf + r->done, len, r->offset + r->done);
        io_uring_sqe_set_data(sqe, r);
        io_uring_submit(&ring_);
    }

    io_uring ring_{};
    bool ready_ = false;
    unsigned in_flight_ = 0;
};

class ThreadIo final : public DiskIo {
  public:
    explicit ThreadIo(unsigned threads) {
        for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
    }
    ~ThreadIo() override {
        while (wait() != nullptr) {
        }
        {
            std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
        }
        todo_cv_.notify_all();
        for (std::thread &t : workers_) t.join();
    }
    void submit(IoRequest *r) override {
        r->done = 0;
        r->error = 0;
        r->finished = false;
        ++in_flight_;
        {
            std::lock_guard<std::mutex> lk(mu_);
            todo_.push_back(r);
        }
        todo_cv_.notify_one();
    }
    IoRequest *wait() override {
        if (in_flight_ == 0) return nullptr;
        std::unique_lock<std::mutex> lk(mu_);
        done_cv_.wait(lk, [this] { return !done_.empty(); });
        IoRequest *r = done_.front();
        done_.pop_front();
        r->finished = true;
        --in_flight_;
        return r;
    }
    const char *name() const override { return "threads"; }

  private:
    static void transfer(IoRequest *r) {
        while (r->done < r->len) {
            const auto off = static_cast<off_t>(r->offset + r->done);
            const ssize_t n = r->write ? pwrite(r->fd, r->buf + r->done, r->len - r->done, off)
                                       : pread(r->fd, r->buf + r->done, r->len - r->done, off);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) r->error = errno;
            if (n == 0 && r->write) r->error = EIO;
            if (n <= 0) return;
            r->done += static_cast<size_t>(n);
        }
    }
    void work() {
        for (;;) {
            IoRequest *r;
            {
                std::unique_lock<std::mutex> lk(mu_);
                todo_cv_.wait(lk, [this] { return stop_ || !todo_.empty(); });
                if (todo_.empty()) return;
                r = todo_.front();
                todo_.pop_front();
            }
            transfer(r);
            {
                std::lock_guard<std::mutex> lk(mu_);
                done_.push_back(r);
            }
            done_cv_.notify_one();
        }
    }

    std::mutex mu_;
    std::condition_variable todo_cv_, done_cv_;
    std::deque<IoRequest *> todo_, done_;
    bool stop_ = false;
    unsigned in_flight_ = 0;  // the submitting thread's count
    std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<DiskIo> DiskIo::create(const std::string &kind, unsigned depth, std::string *why) {
    if (depth == 0) depth = 1;
    if (kind == "auto" || kind == "uring") {
        auto uring = std::make_unique<UringIo>();
        if (uring->start(depth)) return uring;
        if (kind == "uring") {
            *why = "io_uring is not available here (--io threads uses pread/pwrite threads)";
            return nullptr;
        }
    } else if (kind != "threads") {
        *why = "unknown I/O back end '" + kind + "'";
        return nullptr;
    }
    return std::make_unique<ThreadIo>(depth < 8 ? depth : 8);
}

}  // namespace pump
