// A context's life after start-up (setup.cpp): the fabric lock and what
// happens when a provider wedges, orderly finalize, and the calls that read
// the context.
#include <unistd.h>

#include "api/core.hpp"
#include "common/log.hpp"

namespace msg {

Core::~Core() {
    stop_progress_thread();
    // The bootstrap goes first: its reader thread calls back into the engine.
    boot.reset();
    if (wedged) {
        // A thread is stuck inside the provider with these objects: leave
        // them be rather than free memory under it.
        (void)engine.release();
        (void)transport.release();
        return;
    }
    release_fabric();
    if (wake_fd >= 0) ::close(wake_fd);
}

bool Core::lock(std::unique_lock<msg::TimedMutex> &lk) {
    lk = std::unique_lock<msg::TimedMutex>(mu, std::defer_lock);
    if (wedged) return false;
    if (lk.try_lock_for(std::chrono::milliseconds(timeout_ms))) return true;
    declare_wedged("waiting for the fabric lock");
    return false;
}

void Core::declare_wedged(const char *where) {
    if (wedged.exchange(true)) return;
    log_error(
        "%s: a fabric call has not returned for %d ms (the provider is stuck, e.g. "
        "on a failed peer's shared-memory lock); every call now fails",
        where, timeout_ms);
    wake_all_cqs();
}

void Core::wake_all_cqs() {
    std::lock_guard<std::mutex> lk(cqs_mu);
    for (msg_cq *cq : cqs) {
        std::lock_guard<std::mutex> ql(cq->mu);
        cq->cv.notify_all();
    }
    std::lock_guard<std::mutex> pl(probe_mu);
    probe_cv.notify_all();
}

void Core::release_fabric() {
    // The endpoint stops before the engine's buffers and registrations go,
    // and those go before the domain.
    if (transport) transport->shutdown();
    engine.reset();
    transport.reset();
}

namespace {

using clock = Core::clock;

// Our sends finish first (peers may still be reading from us), then
// everyone meets, so nobody closes a connection a peer still needs.
// A slow peer is not an error and a dead one is reported by the
// coordinator (which completes our sends to it), so the only limit
// is on standing still: no fabric activity at all for timeout_ms.
// (A fabric lock that cannot be had is reported by msg_finalize.)
int finish_sends(Core &core) {
    uint64_t seen = 0;
    auto still_since = clock::now();
    for (;;) {
        std::unique_lock<msg::TimedMutex> lk;
        if (!core.lock(lk)) return MSG_OK;
        if (core.engine->quiescent()) return MSG_OK;
        if (core.engine->activity() != seen) {
            seen = core.engine->activity();
            still_since = clock::now();
        } else if (clock::now() - still_since > std::chrono::milliseconds(core.timeout_ms)) {
            log_error(
                "finalize: sends still unfinished and nothing moved for %d ms; "
                "abandoning them",
                core.timeout_ms);
            return MSG_ERR_TIMEOUT;
        }
        lk.unlock();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// libfabric 1.17's rxm closes each connection and then handles the
// completions still queued, reposting receive buffers to the
// connection it has just closed (a crash in fi_close, seen over
// verbs). Take what has arrived first, until the fabric is quiet.
// (A fabric lock that cannot be had is reported by msg_finalize.)
void take_last_arrivals(Core &core) {
    auto quiet_since = clock::now();
    const auto give_up = quiet_since + std::chrono::milliseconds(200);
    for (auto now = quiet_since; now - quiet_since < std::chrono::milliseconds(10) && now < give_up;
         now = clock::now()) {
        if (core.try_progress())
            quiet_since = now;
        else
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

}  // namespace

}  // namespace msg

using msg::Core;

extern "C" int msg_finalize(msg_context_t *context) {
    using namespace msg;
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    Core &core = *context->core;
    if (core.finalized.exchange(true)) return MSG_ERR_FINALIZED;
    int result = MSG_OK;
    if (core.transport) {
        result = finish_sends(core);
        // Needs no limit of its own: a peer that dies or stops answering its
        // heartbeats is failed by the coordinator, which then ends the
        // barrier without it (MSG_ERR_PEER_FAILED), and a coordinator that
        // stops answering ends it here (MSG_ERR_BOOTSTRAP).
        std::string why;
        int rc = core.boot->barrier(-1, &why);
        if (rc != MSG_OK) {
            log_error("finalize: %s", why.c_str());
            if (result == MSG_OK) result = rc;
        }
        core.stop_progress_thread();
        take_last_arrivals(core);
    }
    {
        std::unique_lock<msg::TimedMutex> lk;
        if (core.lock(lk)) {
            core.collectives.close();
            core.engine->abort_all(MSG_ERR_FINALIZED);
            core.collectives.run();
            core.release_fabric();
        } else {
            result = MSG_ERR_TRANSPORT;
        }
    }
    core.wake_all_cqs();
    core.boot->leave();
    if (core.trace && !core.trace->finish() && result == MSG_OK) result = MSG_ERR_CONFIG;
    return result;
}

extern "C" void msg_destroy(msg_context_t *context) {
    if (context == nullptr) return;
    if (!context->core->finalized) msg_finalize(context);
    delete context;
}

extern "C" int msg_rank(const msg_context_t *context, int *rank) {
    if (context == nullptr || rank == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    *rank = context->core->info.rank;
    return MSG_OK;
}

extern "C" int msg_size(const msg_context_t *context, int *size) {
    if (context == nullptr || size == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    *size = context->core->info.size;
    return MSG_OK;
}

namespace msg {

int Core::check_rank(int rank, bool wildcard_ok, const char *prefix) const {
    if (wildcard_ok && rank == MSG_ANY_SOURCE) return MSG_OK;
    if (rank >= 0 && rank < info.size) return MSG_OK;
    log_error("%srank %d is not in this job of %d rank%s (0 to %d)", prefix, rank, info.size,
              info.size == 1 ? "" : "s", info.size - 1);
    return MSG_ERR_UNKNOWN_RANK;
}

}  // namespace msg

extern "C" int msg_get_info(const msg_context_t *context, msg_info_t *info) {
    if (context == nullptr || info == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    *info = context->core->info;
    return MSG_OK;
}

extern "C" int msg_get_protocol_table(const msg_context_t *context, msg_protocol_range_t *ranges,
                                      size_t max, size_t *count) {
    if (context == nullptr || count == nullptr || (ranges == nullptr && max > 0))
        return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    const std::vector<msg_protocol_range_t> &table = context->core->protocol_table;
    for (size_t i = 0; i < table.size() && i < max; ++i) ranges[i] = table[i];
    *count = table.size();
    return MSG_OK;
}

extern "C" int msg_get_stats(const msg_context_t *context, msg_stats_t *stats) {
    if (context == nullptr || stats == nullptr) return MSG_ERR_INVALID_ARG;
    std::unique_lock<msg::TimedMutex> lk;
    if (!context->core->lock(lk)) return MSG_ERR_TRANSPORT;
    if (!context->core->engine) return MSG_ERR_FINALIZED;
    *stats = context->core->engine->stats();
    if (const auto &t = context->core->transport) {
        stats->memory_registrations = t->registrations_made();
        stats->registrations_reused = t->registrations_reused();
    }
    return MSG_OK;
}

extern "C" int msg_barrier(msg_context_t *context) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    std::string why;
    // Bounded as finalize's barrier is: by the heartbeats on the coordinator link.
    int rc = context->core->boot->barrier(-1, &why);
    if (rc != MSG_OK) msg::log_error("barrier: %s", why.c_str());
    return rc;
}
