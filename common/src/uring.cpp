// The two back ends of viaduct::Uring. io_uring: completions are counted on an eventfd, so
// that waiting never touches the ring and any thread may take a completion under the lock.
// Threads: a queue of transfers, a few workers doing pread/pwrite, a queue of results.
#include "viaduct/uring.hpp"

#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace viaduct {

namespace {

class KernelRing final : public Uring {
  public:
    bool start(unsigned depth) {
        if (io_uring_queue_init(depth, &ring_, 0) != 0) return false;
        efd_ = eventfd(0, EFD_CLOEXEC);
        if (efd_ < 0 || io_uring_register_eventfd(&ring_, efd_) != 0) {
            if (efd_ >= 0) close(efd_);
            io_uring_queue_exit(&ring_);
            return false;
        }
        started_ = true;
        return true;
    }
    ~KernelRing() override {
        if (!started_) return;
        io_uring_unregister_eventfd(&ring_);
        close(efd_);
        io_uring_queue_exit(&ring_);
    }
    void submit(UringOp *op) override {
        // The kernel between submitter and taker is invisible to ThreadSanitizer.
        handoff_.fetch_add(1, std::memory_order_release);
        io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
        while (sqe == nullptr) {  // callers keep within the depth; completions free slots
            io_uring_submit(&ring_);
            sqe = io_uring_get_sqe(&ring_);
        }
        const auto len = static_cast<unsigned>(op->len);
        if (op->write)
            io_uring_prep_write(sqe, op->fd, op->buf, len, op->offset);
        else
            io_uring_prep_read(sqe, op->fd, op->buf, len, op->offset);
        io_uring_sqe_set_data(sqe, op);
        io_uring_submit(&ring_);
    }
    UringOp *poll() override {
        std::lock_guard<std::mutex> lk(mu_);
        io_uring_cqe *cqe = nullptr;
        if (io_uring_peek_cqe(&ring_, &cqe) != 0 || cqe == nullptr) return nullptr;
        auto *op = static_cast<UringOp *>(io_uring_cqe_get_data(cqe));
        const int res = cqe->res;
        io_uring_cqe_seen(&ring_, cqe);
        handoff_.load(std::memory_order_acquire);
        op->result = res;
        return op;
    }
    // Every completion and every wake() adds to the eventfd after it is visible, so a
    // completion missed by poll() always ends the read.
    UringOp *wait() override {
        for (;;) {
            if (UringOp *op = poll()) return op;
            std::uint64_t count = 0;
            const ssize_t n = read(efd_, &count, sizeof count);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return nullptr;
            if (take_wakeup()) return nullptr;
        }
    }
    void wake() override {
        wakeups_.fetch_add(1);
        const std::uint64_t one = 1;
        while (write(efd_, &one, sizeof one) < 0 && errno == EINTR) {
        }
    }
    const char *name() const override { return "io_uring"; }

  private:
    bool take_wakeup() {
        int w = wakeups_.load();
        while (w > 0)
            if (wakeups_.compare_exchange_weak(w, w - 1)) return true;
        return false;
    }

    std::mutex mu_;
    io_uring ring_{};
    int efd_ = -1;
    bool started_ = false;
    std::atomic<int> wakeups_{0};
    std::atomic<int> handoff_{0};
};

class ThreadPool final : public Uring {
  public:
    explicit ThreadPool(unsigned threads) {
        for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
    }
    ~ThreadPool() override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
        }
        todo_cv_.notify_all();
        for (std::thread &t : workers_) t.join();
    }
    void submit(UringOp *op) override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            todo_.push_back(op);
        }
        todo_cv_.notify_one();
    }
    UringOp *poll() override {
        std::lock_guard<std::mutex> lk(mu_);
        return take_done();
    }
    UringOp *wait() override {
        std::unique_lock<std::mutex> lk(mu_);
        done_cv_.wait(lk, [this] { return !done_.empty() || wakeups_ > 0; });
        if (UringOp *op = take_done()) return op;
        --wakeups_;
        return nullptr;
    }
    void wake() override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            ++wakeups_;
        }
        done_cv_.notify_all();
    }
    const char *name() const override { return "threads"; }

  private:
    UringOp *take_done() {
        if (done_.empty()) return nullptr;
        UringOp *op = done_.front();
        done_.pop_front();
        return op;
    }

    // Workers finish what was queued before they stop.
    void work() {
        for (;;) {
            UringOp *op;
            {
                std::unique_lock<std::mutex> lk(mu_);
                todo_cv_.wait(lk, [this] { return stop_ || !todo_.empty(); });
                if (todo_.empty()) return;
                op = todo_.front();
                todo_.pop_front();
            }
            const auto off = static_cast<off_t>(op->offset);
            const ssize_t n = op->write ? pwrite(op->fd, op->buf, op->len, off)
                                        : pread(op->fd, op->buf, op->len, off);
            op->result = n < 0 ? -errno : n;
            {
                std::lock_guard<std::mutex> lk(mu_);
                done_.push_back(op);
            }
            done_cv_.notify_all();
        }
    }

    std::mutex mu_;
    std::condition_variable todo_cv_, done_cv_;
    std::deque<UringOp *> todo_, done_;
    int wakeups_ = 0;
    bool stop_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<Uring> Uring::open(unsigned depth, Backend backend) {
    if (depth == 0) depth = 1;
    if (backend == Backend::automatic) {
        auto ring = std::make_unique<KernelRing>();
        if (ring->start(depth)) return ring;
    }
    return std::make_unique<ThreadPool>(depth < 8 ? depth : 8);
}

}  // namespace viaduct
