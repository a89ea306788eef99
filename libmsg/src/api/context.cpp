// Context life cycle: joining the job, choosing and opening the fabric,
// connecting every peer, the progress thread, and orderly finalize.
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "api/core.hpp"
#include "common/log.hpp"
#ifdef VIADUCT_HAVE_VERBS
#include "transport/verbs/verbs_transport.hpp"
#endif

namespace msg {

namespace {

using clock = std::chrono::steady_clock;

// What every rank must agree on, exchanged in the first bootstrap round.
struct JobParams {
    char host[64];
    char provider[64];
    char transport[16];
    int32_t protocol;
    int32_t restricted;
    uint64_t eager_max;
    uint64_t buffer_size;
    int32_t credits;
};

std::vector<uint8_t> to_bytes(const JobParams &p) {
    const auto *b = reinterpret_cast<const uint8_t *>(&p);
    return std::vector<uint8_t>(b, b + sizeof p);
}

int check_config(const msg_config_t &c, std::string *why) {
    if (c.long_protocol != MSG_PROTOCOL_SENDRECV && c.long_protocol != MSG_PROTOCOL_RDMA &&
        c.long_protocol != MSG_PROTOCOL_RDMA_WRITE)
        *why =
            "long_protocol must be MSG_PROTOCOL_SENDRECV, MSG_PROTOCOL_RDMA or "
            "MSG_PROTOCOL_RDMA_WRITE";
    else if (c.buffer_size < 1024 || c.buffer_size > (64u << 20))
        *why = "buffer_size must be between 1 KiB and 64 MiB";
    else if (c.eager_max > c.buffer_size - sizeof(WireHeader))
        *why = "eager_max must fit in a buffer: at most buffer_size - " +
               std::to_string(sizeof(WireHeader));
    else if (c.credits < 1 || c.credits > 1024)
        *why = "credits must be between 1 and 1024";
    else if (c.timeout_ms < 1)
        *why = "timeout_ms must be positive";
    else if (c.spin_us < 0 && c.spin_us != MSG_SPIN_AUTO)
        *why = "spin_us must be MSG_SPIN_AUTO or not negative";
    else
        return MSG_OK;
    return MSG_ERR_CONFIG;
}

// CPUs this process may run on (its affinity mask, which cgroup cpusets and
// taskset narrow), at least 1.
int usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

double seconds_since(clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
}

}  // namespace

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
}

void Core::release_fabric() {
    // The endpoint stops before the engine's buffers and registrations go,
    // and those go before the domain.
    if (transport) transport->shutdown();
    engine.reset();
    transport.reset();
}

bool Core::try_progress() {
    std::unique_lock<msg::TimedMutex> lk(mu, std::try_to_lock);
    if (!lk.owns_lock() || !engine) return false;
    return engine->progress();
}

void Core::start_progress_thread() {
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    progress = std::thread([this] { progress_loop(); });
}

void Core::stop_progress_thread() {
    if (!progress.joinable()) return;
    stop = true;
    wake_progress();
    if (wedged)
        progress.detach();
    else
        progress.join();
}

void Core::wake_progress() {
    if (wake_fd < 0) return;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
}

// Drives the fabric while application threads sleep. While an application
// thread polls in a wait, it only naps (that thread does the work); it takes
// over within 16 ms of the last such thread leaving. It never
// spins: on a machine with few cores a spinning progress thread delays the
// wake-up of the very thread it just completed work for. It blocks on the
// transport's fd (libfabric's CQ fd, or the shm doorbell), or without one
// backs off from 20 us to 1 ms between polls, so an idle process costs well
// under 1% of a core.
// A thread waiting for the fabric lock while this one keeps taking it (a
// large message moving in many passes) gets its turn: the mutex is not fair,
// and a waiter kept out for timeout_ms would declare the fabric wedged.
void Core::step_aside() {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
    while (mu.waiters() > 0 && std::chrono::steady_clock::now() < until) sched_yield();
}

void Core::progress_loop() {
    int idle_us = 0;
    while (!stop) {
        int fd = -1, timeout_ms = 0;
        bool blocking = false;
        if (spinners.load() > 0) {
            // A thread that leaves its wait for lack of a completion wakes us;
            // one that leaves with a completion does not (it is usually back
            // within microseconds), so we look again after a nap. Each look
            // preempts a spinning thread: 1 ms naps cost a busy two-core host
            // a tenth of its all-to-all bandwidth (20% on tcp at P = 4).
            timeout_ms = 16;
        } else {
            {
                std::unique_lock<msg::TimedMutex> lk(mu);
                if (engine->progress()) {
                    idle_us = 0;
                    lk.unlock();
                    step_aside();
                    continue;
                }
                // libfabric's CQ fd (tcp) also rings for our own operations
                // and for sockets ready to move more data. The shm doorbell
                // rings only for arrivals, so while our sends are in flight
                // (their completions need the peer's reply) we poll instead;
                // so too while a full queue holds work back (a backlog),
                // which no fd announces the end of.
                bool fd_enough =
                    transport->fd_covers_own_operations() || engine->ops_in_flight() == 0;
                if (transport->wait_fd() >= 0 && fd_enough && !engine->has_backlog() &&
                    transport->prepare_wait()) {
                    if (engine->progress()) {
                        transport->finish_wait();
                        idle_us = 0;
                        continue;
                    }
                    blocking = true;
                    fd = transport->wait_fd();
                    timeout_ms = 100;
                }
            }
            if (!blocking) idle_us = idle_us == 0 ? 20 : std::min(idle_us * 2, 1000);
        }
        pollfd fds[2] = {{wake_fd, POLLIN, 0}, {fd, POLLIN, 0}};
        if (timeout_ms > 0) {
            ::poll(fds, fd >= 0 ? 2 : 1, timeout_ms);
        } else {
            timespec ts{0, idle_us * 1000L};
            ::ppoll(fds, 1, &ts, nullptr);
        }
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            [[maybe_unused]] ssize_t n = ::read(wake_fd, &v, sizeof v);
        }
        if (blocking) {
            std::lock_guard<msg::TimedMutex> lk(mu);
            transport->finish_wait();
        }
    }
}

}  // namespace msg

using msg::Core;

extern "C" int msg_init(const msg_config_t *config, msg_context_t **context) {
    using namespace msg;
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    *context = nullptr;
    // Done at load already; again here for a PSM library loaded since (PSM's
    // handlers mask a crash or a kill as exit status 1).
    keep_default_crash_signals();
    auto t0 = clock::now();
    msg_config_t cfg;
    if (config != nullptr) {
        cfg = *config;
    } else {
        int rc = msg_config_init(&cfg);
        if (rc != MSG_OK) return rc;
    }
    std::string why;
    if (check_config(cfg, &why) != MSG_OK) {
        log_error("bad configuration: %s", why.c_str());
        return MSG_ERR_CONFIG;
    }

    // The transport: libfabric (default) or native verbs, chosen at run time.
    const char *transport = std::getenv("VIADUCT_TRANSPORT");
    if (transport == nullptr || *transport == '\0') transport = "ofi";
    if (std::strcmp(transport, "ofi") != 0 && std::strcmp(transport, "verbs") != 0) {
        log_error("VIADUCT_TRANSPORT=%s: must be ofi or verbs", transport);
        return MSG_ERR_CONFIG;
    }

    auto core = std::make_shared<Core>();
    core->timeout_ms = cfg.timeout_ms;
    core->spin_us = cfg.spin_us;
    int rc = make_bootstrap(cfg.timeout_ms, &core->boot, &why);
    if (rc != MSG_OK) {
        log_error("cannot join the job: %s", why.c_str());
        return rc;
    }
    int rank = core->boot->rank(), size = core->boot->size();
    log_set_rank(rank);

    // Round 1: agree on parameters and learn where everyone runs.
    JobParams mine{};
    gethostname(mine.host, sizeof mine.host - 1);
    if (cfg.provider != nullptr)
        std::strncpy(mine.provider, cfg.provider, sizeof mine.provider - 1);
    std::strncpy(mine.transport, transport, sizeof mine.transport - 1);
    mine.protocol = cfg.long_protocol;
    mine.restricted = cfg.restricted != 0;
    mine.eager_max = cfg.eager_max;
    mine.buffer_size = cfg.buffer_size;
    mine.credits = cfg.credits;
    std::vector<std::vector<uint8_t>> all;
    rc = core->boot->allgather(to_bytes(mine), all, cfg.timeout_ms, &why);
    if (rc != MSG_OK) {
        log_error("job start-up failed: %s", why.c_str());
        return rc == MSG_ERR_TIMEOUT ? MSG_ERR_BOOTSTRAP : rc;
    }
    bool one_host = true;
    int ranks_here = 0;
    for (int r = 0; r < size; ++r) {
        JobParams p{};
        if (all[static_cast<size_t>(r)].size() != sizeof p) return MSG_ERR_BOOTSTRAP;
        std::memcpy(&p, all[static_cast<size_t>(r)].data(), sizeof p);
        if (std::strncmp(p.host, mine.host, sizeof p.host) != 0)
            one_host = false;
        else
            ++ranks_here;
        if (std::strncmp(p.provider, mine.provider, sizeof p.provider) != 0 ||
            std::strncmp(p.transport, mine.transport, sizeof p.transport) != 0 ||
            p.protocol != mine.protocol || p.restricted != mine.restricted ||
            p.eager_max != mine.eager_max || p.buffer_size != mine.buffer_size ||
            p.credits != mine.credits) {
            log_error(
                "rank %d runs with different settings (transport, provider, protocol, mode, "
                "eager_max, buffer_size or credits); every rank must use the same",
                r);
            return MSG_ERR_CONFIG;
        }
    }
    const int cpus = usable_cpus();
    core->spin_yield = ranks_here > cpus;
    if (cfg.spin_us == MSG_SPIN_AUTO) core->spin_us = 200;
    log_debug("%d ranks on this host, %d CPUs: waiters poll %d us%s", ranks_here, cpus,
              core->spin_us, core->spin_yield ? ", yielding between polls" : "");
    std::string provider = cfg.provider != nullptr ? cfg.provider
                           : one_host              ? "shm"
                                                   : "tcp;ofi_rxm";

    EngineOptions opts;
    opts.long_protocol = cfg.long_protocol;
    opts.restricted = cfg.restricted != 0;
    opts.eager_max = cfg.eager_max;
    opts.buffer_size = cfg.buffer_size;
    opts.credits = cfg.credits;

    if (size > 1) {
        if (std::strcmp(transport, "verbs") == 0) {
#ifdef VIADUCT_HAVE_VERBS
            core->transport = open_verbs_transport(cfg.timeout_ms, &why);
#else
            why = "this libmsg was built without rdma-core: no verbs transport";
#endif
        } else {
            core->transport = open_ofi_transport(provider, &why);
        }
        if (!core->transport) {
            log_error("%s", why.c_str());
            return MSG_ERR_TRANSPORT;
        }
    }
    core->engine = std::make_unique<Engine>(core->transport.get(), rank, size, opts);
    rc = core->engine->init();
    if (rc != MSG_OK) return rc;

    auto connect_start = clock::now();
    if (size > 1) {
        // Round 2: fabric addresses.
        auto addr = core->transport->address();
        rc = core->boot->allgather(addr, all, cfg.timeout_ms, &why);
        if (rc != MSG_OK) {
            log_error("address exchange failed: %s", why.c_str());
            return rc == MSG_ERR_TIMEOUT ? MSG_ERR_BOOTSTRAP : rc;
        }
        if (core->transport->connect(all) != 0) return MSG_ERR_TRANSPORT;
        Core *raw = core.get();
        core->boot->on_peer_failed([raw](int r) {
            std::unique_lock<msg::TimedMutex> lk;
            if (raw->lock(lk) && raw->engine) raw->engine->fail_peer(r);
        });
        // Handshake: every connection is up before init returns.
        auto deadline = clock::now() + std::chrono::milliseconds(cfg.timeout_ms);
        {
            std::unique_lock<msg::TimedMutex> lk;
            if (!core->lock(lk)) return MSG_ERR_TRANSPORT;
            core->engine->start_handshake();
        }
        for (;;) {
            std::unique_lock<msg::TimedMutex> lk;
            if (!core->lock(lk)) return MSG_ERR_TRANSPORT;
            core->engine->progress();
            if (core->engine->handshake_done()) {
                core->transport->peers_connected();
                break;
            }
            lk.unlock();
            if (clock::now() > deadline) {
                log_error("could not reach every peer within %d ms", cfg.timeout_ms);
                return MSG_ERR_TIMEOUT;
            }
            sched_yield();
        }
        core->start_progress_thread();
    }

    msg_info_t &info = core->info;
    info.rank = rank;
    info.size = size;
    std::strncpy(info.provider, size > 1 ? core->transport->name().c_str() : "self",
                 sizeof info.provider - 1);
    info.long_protocol = cfg.long_protocol;
    info.restricted = cfg.restricted != 0;
    info.eager_max = cfg.eager_max;
    info.timeout_ms = cfg.timeout_ms;
    info.buffer_size = cfg.buffer_size;
    info.connect_seconds = seconds_since(connect_start);
    info.init_seconds = seconds_since(t0);
    try {
        *context = new msg_context{std::move(core)};
    } catch (const std::bad_alloc &) {
        return MSG_ERR_NO_MEMORY;
    }
    return MSG_OK;
}

extern "C" int msg_finalize(msg_context_t *context) {
    using namespace msg;
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    Core &core = *context->core;
    if (core.finalized.exchange(true)) return MSG_ERR_FINALIZED;
    int result = MSG_OK;
    std::string why;
    if (core.transport) {
        // Our sends finish first (peers may still be reading from us), then
        // everyone meets, so nobody closes a connection a peer still needs.
        // A slow peer is not an error and a dead one is reported by the
        // coordinator (which completes our sends to it), so the only limit
        // is on standing still: no fabric activity at all for timeout_ms.
        uint64_t seen = 0;
        auto still_since = clock::now();
        for (;;) {
            std::unique_lock<msg::TimedMutex> lk;
            if (!core.lock(lk)) break;
            if (core.engine->quiescent()) break;
            if (core.engine->activity() != seen) {
                seen = core.engine->activity();
                still_since = clock::now();
            } else if (clock::now() - still_since > std::chrono::milliseconds(core.timeout_ms)) {
                log_error(
                    "finalize: sends still unfinished and nothing moved for %d ms; "
                    "abandoning them",
                    core.timeout_ms);
                result = MSG_ERR_TIMEOUT;
                break;
            }
            lk.unlock();
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        // Needs no limit of its own: a peer that dies or stops answering its
        // heartbeats is failed by the coordinator, which then ends the
        // barrier without it (MSG_ERR_PEER_FAILED), and a coordinator that
        // stops answering ends it here (MSG_ERR_BOOTSTRAP).
        int rc = core.boot->barrier(-1, &why);
        if (rc != MSG_OK) {
            log_error("finalize: %s", why.c_str());
            if (result == MSG_OK) result = rc;
        }
        core.stop_progress_thread();
        // libfabric 1.17's rxm closes each connection and then handles the
        // completions still queued, reposting receive buffers to the
        // connection it has just closed (a crash in fi_close, seen over
        // verbs). Take what has arrived first, until the fabric is quiet.
        // (A fabric lock that cannot be had is reported just below.)
        auto quiet_since = clock::now();
        const auto give_up = quiet_since + std::chrono::milliseconds(200);
        for (auto now = quiet_since;
             now - quiet_since < std::chrono::milliseconds(10) && now < give_up;
             now = clock::now()) {
            if (core.try_progress())
                quiet_since = now;
            else
                std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
    {
        std::unique_lock<msg::TimedMutex> lk;
        if (core.lock(lk)) {
            core.engine->abort_all(MSG_ERR_FINALIZED);
            core.release_fabric();
        } else {
            result = MSG_ERR_TRANSPORT;
        }
    }
    core.wake_all_cqs();
    core.boot->leave();
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

extern "C" int msg_get_info(const msg_context_t *context, msg_info_t *info) {
    if (context == nullptr || info == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    *info = context->core->info;
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
