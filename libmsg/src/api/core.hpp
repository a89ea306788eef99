// What stands behind the C handles: the shared core of a context (lock,
// engine, transport, bootstrap, progress thread) and the completion queue.
// Its life: setup.cpp builds it (msg_init), progress.cpp drives the fabric
// (the progress thread and how waiters poll), context.cpp locks and ends it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "collective/collective_set.hpp"
#include "common/timed_mutex.hpp"
#include "msg/msg.h"
#include "msg_internal/one_shot.hpp"
#include "protocol/engine.hpp"
#include "protocol/message_trace.hpp"
#include "transport/transport.hpp"

struct msg_cq;

namespace msg {

// How an application thread waits for a completion (progress.cpp).
struct WaitPolicy {
    int spin_us = 50;    // it polls the fabric itself this long, then sleeps
    bool yield = false;  // more ranks than CPUs here: yield between polls
};
// spin_us: msg_config_t.spin_us (MSG_SPIN_AUTO allowed); ranks: the job's
// ranks that may run on this one's CPUs, this one included; cpus: the CPUs
// they may run on between them (0: this process's own). Ranks bound one to a
// CPU do not yield: nothing else of the job needs their CPU.
WaitPolicy choose_wait_policy(int spin_us, int ranks, int cpus);

// Shared by the context handle and every CQ, so a CQ outlives msg_destroy
// safely. `mu` serializes the engine and the transport.
struct Core {
    using clock = std::chrono::steady_clock;

    ~Core();
    // progress.cpp
    void start_progress_thread();
    void stop_progress_thread();
    void progress_loop();
    void step_aside();
    // One progress pass if nobody else is making progress right now.
    bool try_progress();
    // One engine pass, then the collectives it gave completions to (mu held).
    bool progress_locked();
    // A waiter's first phase: it drives the fabric itself until take()
    // succeeds or the policy's spin time has passed (one look if just_look),
    // the progress thread napping meanwhile. Unless take() succeeded, *start
    // is when the wait began (its first clock read).
    bool poll_as_waiter(clock::time_point *start, bool just_look,
                        const std::function<bool()> &take);

    // context.cpp
    // Closes the endpoint, then the engine's buffers, then the fabric.
    void release_fabric();

    // Takes mu, waiting at most timeout_ms. A provider call that never
    // returns (libfabric 1.17's shm spins forever on a lock a killed peer
    // held) must not hang every other caller too: the core is then declared
    // wedged and every call fails with MSG_ERR_TRANSPORT.
    bool lock(std::unique_lock<TimedMutex> &lk);
    // MSG_OK for a rank of this job (or MSG_ANY_SOURCE where wildcard_ok), else
    // MSG_ERR_UNKNOWN_RANK, logged with the job's size after `prefix` ("" or "probe: ").
    int check_rank(int rank, bool wildcard_ok, const char *prefix) const;
    void declare_wedged(const char *where);
    void wake_all_cqs();

    TimedMutex mu;
    std::atomic<bool> wedged{false};
    std::unique_ptr<Bootstrap> boot;
    std::unique_ptr<Transport> transport;
    const char *transport_kind = "self";  // the one opened: ofi, verbs or shm
    // Before the engine: it outlives it (the engine may complete their messages to the end).
    CollectiveSet collectives;  // guarded by mu
    std::unique_ptr<Engine> engine;
    std::unique_ptr<MessageTrace> trace;  // VIADUCT_TRACE; written at finalize
    std::atomic<bool> finalized{false};
    msg_info_t info{};
    std::vector<msg_protocol_range_t> protocol_table;  // msg_get_protocol_table's, from init
    int timeout_ms = 10000;
    WaitPolicy wait;

    std::mutex cqs_mu;
    std::vector<msg_cq *> cqs;  // guarded by cqs_mu; woken at finalize
    // Blocking calls' private CQs, kept for the next such call rather than made
    // and freed each time (borrow_cq); guarded by cqs_mu. A spare holds no
    // reference to the core.
    std::vector<std::unique_ptr<msg_cq>> spare_cqs;

    // Threads blocked in msg_probe sleep on probe_cv; whoever moves the
    // engine (a message may have arrived) wakes them.
    std::mutex probe_mu;
    std::condition_variable probe_cv;
    std::atomic<int> probers{0};
    std::atomic<uint64_t> probe_gen{0};  // moves announced to probers
    void notify_probers();

    std::thread progress;
    std::atomic<bool> stop{false};
    // Application threads polling the fabric themselves in a wait; while
    // there are any, the progress thread stays out of their way.
    std::atomic<int> spinners{0};
    void wake_progress();
    int wake_fd = -1;
};

}  // namespace msg

struct msg_context {
    std::shared_ptr<msg::Core> core;
};

struct msg_cq final : public msg::CompletionSink {
    explicit msg_cq(std::shared_ptr<msg::Core> c) : core(std::move(c)) {}
    ~msg_cq() override;
    void deliver(const msg_completion_t &c) override;
    void push(const msg_completion_t &c);
    // The front entry into *out, if any (mu held); keeps the fd's state.
    bool take_locked(msg_completion_t *out);
    // msg_cq_get_fd: the eventfd, made on first use.
    int get_fd(int *fd);
    int wait(int timeout_ms, msg_completion_t *out);
    // A wait's second phase: sleeps until an entry, finalize, a wedged core
    // or the deadline.
    int sleep(msg::Core::clock::time_point start, int timeout_ms, msg_completion_t *out);

    std::shared_ptr<msg::Core> core;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<msg_completion_t> entries;
    // entries.size(), written under mu: a poller looks at it before taking mu.
    std::atomic<size_t> count{0};
    // An eventfd readable exactly while entries is not empty (guarded by mu);
    // -1 until msg_cq_get_fd asks for it.
    int event_fd = -1;
    long in_flight = 0;  // operations bound to this CQ, guarded by core->mu
    // A callback CQ hands each completion to callback instead of queueing it.
    msg_cq_callback_fn callback = nullptr;
    void *callback_arg = nullptr;
};

namespace msg {

// A CQ for one blocking call: one of the core's spares, else a new one.
int borrow_cq(msg_context_t *context, msg_cq_t **cq);
// Gives back a CQ borrow_cq lent: kept as a spare (at most kSpareCqs) when no
// operation is bound to it and nothing waits in it, else destroyed.
void give_back_cq(msg_cq_t *cq);
inline constexpr size_t kSpareCqs = 8;

// A blocking call: viaduct::one_shot_with on a borrowed CQ.
template <typename Issue, typename Done = void (*)(const msg_completion_t &)>
int blocking_call(msg_context_t *context, Issue &&issue, Done &&done = viaduct::ignore_completion) {
    return viaduct::one_shot_with(borrow_cq, give_back_cq, context, issue, done);
}

// The checks every call that binds an operation to a CQ starts with: a NULL context or CQ, a
// CQ of another context (MSG_ERR_INVALID_ARG), a finalized context (MSG_ERR_FINALIZED).
inline int check_context_cq(const msg_context_t *context, const msg_cq_t *cq) {
    if (context == nullptr || cq == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    if (cq->core != context->core) return MSG_ERR_INVALID_ARG;
    return MSG_OK;
}

}  // namespace msg
