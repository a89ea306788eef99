// Completion queues: a locked deque and a condition variable. A waiter polls
// the fabric itself first (progress.cpp's policy: low latency), then sleeps
// while the progress thread works (no core burnt).
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "api/core.hpp"

namespace {

void signal_fd(int fd) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(fd, &one, sizeof one);
}

void drain_fd(int fd) {
    uint64_t v;
    [[maybe_unused]] ssize_t n = ::read(fd, &v, sizeof v);
}

}  // namespace

msg_cq::~msg_cq() {
    if (event_fd >= 0) ::close(event_fd);
}

bool msg_cq::take_locked(msg_completion_t *out) {
    if (entries.empty()) return false;
    *out = entries.front();
    entries.pop_front();
    count.store(entries.size(), std::memory_order_relaxed);
    if (entries.empty() && event_fd >= 0) drain_fd(event_fd);
    return true;
}

int msg_cq::get_fd(int *fd) {
    std::lock_guard<std::mutex> lk(mu);
    if (event_fd < 0) {
        event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (event_fd < 0) return errno == ENOMEM ? MSG_ERR_NO_MEMORY : MSG_ERR_TRANSPORT;
        if (!entries.empty()) signal_fd(event_fd);
    }
    *fd = event_fd;
    return MSG_OK;
}

void msg_cq::deliver(const msg_completion_t &c) {
    --in_flight;  // core->mu is held by the engine's caller
    if (callback != nullptr)
        callback(callback_arg, &c);
    else
        push(c);
}

void msg_cq::push(const msg_completion_t &c) {
    // Notify under the lock: the waiter may destroy this CQ (msg_recv's
    // private one) as soon as it sees the entry.
    std::lock_guard<std::mutex> lk(mu);
    entries.push_back(c);
    count.store(entries.size(), std::memory_order_release);
    if (entries.size() == 1 && event_fd >= 0) signal_fd(event_fd);
    cv.notify_one();
}

int msg_cq::wait(int timeout_ms, msg_completion_t *out) {
    auto take = [&] {
        if (count.load(std::memory_order_acquire) == 0) return false;
        std::lock_guard<std::mutex> lk(mu);
        return take_locked(out);
    };
    if (take()) return MSG_OK;
    if (core->finalized) return MSG_ERR_FINALIZED;
    // Poll the fabric ourselves for a short while: the answer to a message
    // just sent often arrives within microseconds.
    msg::Core::clock::time_point start;
    if (core->poll_as_waiter(&start, timeout_ms == 0, take)) return MSG_OK;
    return sleep(start, timeout_ms, out);
}

int msg_cq::sleep(msg::Core::clock::time_point start, int timeout_ms, msg_completion_t *out) {
    using clock = msg::Core::clock;
    std::unique_lock<std::mutex> lk(mu);
    auto ready = [&] { return !entries.empty() || core->finalized || core->wedged; };
    auto deadline =
        timeout_ms < 0 ? clock::time_point::max() : start + std::chrono::milliseconds(timeout_ms);
    // Sleep in slices: between them, make sure the fabric lock can still be
    // had, so a provider stuck for good is reported instead of waited on.
    const auto slice = std::chrono::milliseconds(core->timeout_ms);
    while (timeout_ms != 0 && !ready()) {
        auto until = clock::now() + slice;
        if (until > deadline) until = deadline;
        if (cv.wait_until(lk, until, ready)) break;
        if (clock::now() >= deadline) break;
        lk.unlock();
        std::unique_lock<msg::TimedMutex> probe;
        core->lock(probe);
        probe = {};
        lk.lock();
    }
    if (take_locked(out)) return MSG_OK;
    if (core->wedged) return MSG_ERR_TRANSPORT;
    return core->finalized ? MSG_ERR_FINALIZED : MSG_ERR_TIMEOUT;
}

extern "C" int msg_cq_create(msg_context_t *context, msg_cq_t **cq) {
    if (context == nullptr || cq == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    try {
        auto *q = new msg_cq(context->core);
        std::lock_guard<std::mutex> lk(context->core->cqs_mu);
        context->core->cqs.push_back(q);
        *cq = q;
    } catch (const std::bad_alloc &) {
        return MSG_ERR_NO_MEMORY;
    }
    return MSG_OK;
}

namespace msg {

int borrow_cq(msg_context_t *context, msg_cq_t **cq) {
    if (context == nullptr || cq == nullptr) return MSG_ERR_INVALID_ARG;
    Core &core = *context->core;
    if (core.finalized) return MSG_ERR_FINALIZED;
    {
        std::lock_guard<std::mutex> lk(core.cqs_mu);
        if (!core.spare_cqs.empty()) {
            std::unique_ptr<msg_cq> q = std::move(core.spare_cqs.back());
            core.spare_cqs.pop_back();
            try {
                core.cqs.push_back(q.get());
            } catch (const std::bad_alloc &) {
                return MSG_ERR_NO_MEMORY;
            }
            q->core = context->core;
            *cq = q.release();
            return MSG_OK;
        }
    }
    return msg_cq_create(context, cq);
}

void give_back_cq(msg_cq_t *cq) {
    const std::shared_ptr<Core> core = cq->core;  // alive until this returns
    std::unique_ptr<msg_cq> spare;
    {
        std::unique_lock<msg::TimedMutex> lk;
        if (!core->lock(lk)) return;  // wedged: the CQ stays listed, freed with the core
        // With nothing bound to it (core->mu held), nothing can arrive in it.
        bool idle = cq->in_flight == 0 && cq->callback == nullptr;
        {
            std::lock_guard<std::mutex> ql(cq->mu);
            idle = idle && cq->entries.empty() && cq->event_fd < 0;
        }
        if (!idle) {
            lk.unlock();
            msg_cq_destroy(cq);
            return;
        }
        std::lock_guard<std::mutex> cl(core->cqs_mu);
        std::erase(core->cqs, cq);
        spare.reset(cq);
        if (core->spare_cqs.size() < kSpareCqs) {
            spare->core.reset();
            try {
                core->spare_cqs.push_back(std::move(spare));
            } catch (const std::bad_alloc &) {
                // spare still owns it: freed below
            }
        }
    }
}

}  // namespace msg

extern "C" int msg_cq_create_callback(msg_context_t *context, msg_cq_callback_fn fn, void *arg,
                                      msg_cq_t **cq) {
    if (fn == nullptr) return MSG_ERR_INVALID_ARG;
    int rc = msg_cq_create(context, cq);
    if (rc != MSG_OK) return rc;
    (*cq)->callback = fn;
    (*cq)->callback_arg = arg;
    return MSG_OK;
}

extern "C" int msg_cq_destroy(msg_cq_t *cq) {
    if (cq == nullptr) return MSG_ERR_INVALID_ARG;
    {
        std::unique_lock<msg::TimedMutex> lk;
        if (!cq->core->lock(lk)) return MSG_ERR_TRANSPORT;
        if (cq->in_flight > 0) return MSG_ERR_BUSY;
        std::lock_guard<std::mutex> cl(cq->core->cqs_mu);
        std::erase(cq->core->cqs, cq);
    }
    delete cq;
    return MSG_OK;
}

extern "C" int msg_cq_wait(msg_cq_t *cq, int timeout_ms, msg_completion_t *completion) {
    if (cq == nullptr || completion == nullptr || cq->callback != nullptr)
        return MSG_ERR_INVALID_ARG;
    return cq->wait(timeout_ms, completion);
}

extern "C" int msg_cq_post(msg_cq_t *cq, const msg_completion_t *entry) {
    if (cq == nullptr || entry == nullptr) return MSG_ERR_INVALID_ARG;
    if (cq->callback != nullptr)
        cq->callback(cq->callback_arg, entry);
    else
        cq->push(*entry);
    return MSG_OK;
}

extern "C" int msg_cq_cancel_recvs(msg_cq_t *cq, size_t *canceled) {
    if (cq == nullptr) return MSG_ERR_INVALID_ARG;
    if (canceled != nullptr) *canceled = 0;
    std::unique_lock<msg::TimedMutex> lk;
    if (!cq->core->lock(lk)) return MSG_ERR_TRANSPORT;
    // After finalize the engine has already completed every receive.
    if (cq->core->finalized || !cq->core->engine) return MSG_OK;
    size_t n = cq->core->engine->cancel_recvs(cq);
    if (canceled != nullptr) *canceled = n;
    return MSG_OK;
}

extern "C" int msg_cq_get_fd(msg_cq_t *cq, int *fd) {
    if (cq == nullptr || fd == nullptr || cq->callback != nullptr) return MSG_ERR_INVALID_ARG;
    return cq->get_fd(fd);
}
