// msg_init, step by step: read the configuration, join the job and agree on
// its settings, open the transport, create the engine, connect every peer,
// and report what is in effect.
#include <sched.h>
#include <unistd.h>

#include <cstring>

#include "api/core.hpp"
#include "common/config.hpp"
#include "common/log.hpp"
#include "common/protocol_names.hpp"
#include "protocol/protocol_choice.hpp"
#include "transport/registry.hpp"
#include "viaduct/clock.hpp"

namespace msg {

namespace {

using clock = Core::clock;
using viaduct::seconds_since;

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
    int32_t active_peers;
    cpu_set_t cpus;  // where the rank may run (all zero: unknown); not a setting
};

// Where the job's ranks run, as this rank sees it after the first round.
struct Placement {
    bool one_host = true;  // every rank on this host
    // The ranks here that may run on a CPU this one may (this one included), and the CPUs
    // they may run on between them: ranks bound one to a CPU share none. Where a rank's CPUs
    // are unknown: every rank here, and 0 (this process's own count).
    int sharers = 0, shared_cpus = 0;
};

std::vector<uint8_t> to_bytes(const JobParams &p) {
    const auto *b = reinterpret_cast<const uint8_t *>(&p);
    return std::vector<uint8_t>(b, b + sizeof p);
}

// Time limits, waiting and the transport.
int check_running(const msg_config_t &c, std::string *why) {
    if (c.timeout_ms < 1)
        *why = "timeout_ms must be positive";
    else if (c.spin_us < 0 && c.spin_us != MSG_SPIN_AUTO)
        *why = "spin_us must be MSG_SPIN_AUTO or not negative";
    else if (c.heartbeat_ms < 0)
        *why = "heartbeat_ms must not be negative";
    else if (std::strcmp(transport_name(c), "auto") != 0 && !transport_known(transport_name(c)))
        *why = "transport must be auto, ofi, verbs or shm, not " + std::string(transport_name(c));
    else if (c.trace != nullptr && c.trace[0] != '\0' && c.trace_records < 1)
        *why = "trace_records must be at least 1";
    else
        return MSG_OK;
    return MSG_ERR_CONFIG;
}

// Step 1: the caller's configuration, or the defaults and the environment.
int read_config(const msg_config_t *given, msg_config_t *cfg) {
    if (given != nullptr) {
        *cfg = *given;
    } else {
        int rc = msg_config_init(cfg);
        if (rc != MSG_OK) return rc;
    }
    log_set_level(cfg->debug != 0 ? MSG_LOG_DEBUG : cfg->log_level);
    std::string why;
    if (check_messaging(*cfg, &why) != MSG_OK || check_running(*cfg, &why) != MSG_OK) {
        log_error("bad configuration: %s", why.c_str());
        return MSG_ERR_CONFIG;
    }
    return MSG_OK;
}

// Step 2: the job's bootstrap, which knows this rank and the job's size.
int join_job(const msg_config_t &cfg, Core &core) {
    BootstrapSettings settings;
    if (cfg.bootstrap != nullptr) settings.method = cfg.bootstrap;
    settings.timeout_ms = cfg.timeout_ms;
    settings.heartbeat_ms = cfg.heartbeat_ms;
    std::string why;
    int rc = make_bootstrap(settings, &core.boot, &why);
    if (rc != MSG_OK) {
        log_error("cannot join the job: %s", why.c_str());
        return rc;
    }
    log_set_rank(core.boot->rank());
    return MSG_OK;
}

JobParams job_params(const msg_config_t &cfg) {
    JobParams mine{};
    gethostname(mine.host, sizeof mine.host - 1);
    if (cfg.provider != nullptr)
        std::strncpy(mine.provider, cfg.provider, sizeof mine.provider - 1);
    std::strncpy(mine.transport, transport_name(cfg), sizeof mine.transport - 1);
    mine.protocol = cfg.long_protocol;
    mine.restricted = cfg.restricted != 0;
    mine.eager_max = cfg.eager_max;
    mine.buffer_size = cfg.buffer_size;
    mine.credits = cfg.credits;
    mine.active_peers = active_peers(cfg);
    if (sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) != 0) CPU_ZERO(&mine.cpus);
    return mine;
}

std::string setting_name(int protocol) {
    const ProtocolNames *n = protocol_names(protocol);
    return n != nullptr ? n->setting : std::to_string(protocol);
}

// "" if two ranks' settings agree, else the first that differs, named by its
// variable and field, with both values.
std::string setting_difference(const JobParams &mine, const JobParams &theirs) {
    auto text = [](const char *s, size_t n) {
        std::string t(s, strnlen(s, n));
        return t.empty() ? std::string("(default)") : t;
    };
    struct Setting {
        const char *name;
        std::string here, there;
    };
    const Setting settings[] = {
        {"VIADUCT_TRANSPORT (transport)", text(mine.transport, sizeof mine.transport),
         text(theirs.transport, sizeof theirs.transport)},
        {"VIADUCT_PROVIDER (provider)", text(mine.provider, sizeof mine.provider),
         text(theirs.provider, sizeof theirs.provider)},
        {"VIADUCT_PROTOCOL (long_protocol)", setting_name(mine.protocol),
         setting_name(theirs.protocol)},
        {"VIADUCT_RESTRICTED (restricted)", std::to_string(mine.restricted),
         std::to_string(theirs.restricted)},
        {"VIADUCT_EAGER_MAX (eager_max)", std::to_string(mine.eager_max),
         std::to_string(theirs.eager_max)},
        {"VIADUCT_BUFFER_SIZE (buffer_size)", std::to_string(mine.buffer_size),
         std::to_string(theirs.buffer_size)},
        {"VIADUCT_CREDITS (credits)", std::to_string(mine.credits), std::to_string(theirs.credits)},
        {"VIADUCT_ACTIVE_PEERS (active_peers)", std::to_string(mine.active_peers),
         std::to_string(theirs.active_peers)},
    };
    for (const Setting &s : settings)
        if (s.here != s.there) return std::string(s.name) + ": " + s.here + " here, " + s.there;
    return {};
}

// The ranks here (`here`, this one included) that may run on one of this rank's CPUs, and
// the CPUs they may run on between them; every rank here and 0 if any rank's CPUs are unknown.
void count_sharers(const JobParams &mine, const std::vector<JobParams> &here, Placement *where) {
    where->sharers = static_cast<int>(here.size());
    where->shared_cpus = 0;
    if (CPU_COUNT(&mine.cpus) == 0) return;
    cpu_set_t cpus = mine.cpus;
    int sharers = 0;
    for (const JobParams &p : here) {
        if (CPU_COUNT(&p.cpus) == 0) return;
        cpu_set_t both;
        CPU_AND(&both, &mine.cpus, &p.cpus);
        if (CPU_COUNT(&both) == 0) continue;
        CPU_OR(&cpus, &cpus, &p.cpus);
        ++sharers;
    }
    where->sharers = sharers;
    where->shared_cpus = CPU_COUNT(&cpus);
}

// Round 1 of the bootstrap: every rank runs with the same settings, and
// learns where the others run.
int agree_on_settings(const msg_config_t &cfg, Core &core, Placement *where) {
    const JobParams mine = job_params(cfg);
    std::vector<std::vector<uint8_t>> all;
    std::string why;
    int rc = core.boot->allgather(to_bytes(mine), all, cfg.timeout_ms, &why);
    if (rc != MSG_OK) {
        log_error("job start-up failed: %s", why.c_str());
        return rc == MSG_ERR_TIMEOUT ? MSG_ERR_BOOTSTRAP : rc;
    }
    std::vector<JobParams> here;
    for (int r = 0; r < core.boot->size(); ++r) {
        JobParams p{};
        if (all[static_cast<size_t>(r)].size() != sizeof p) return MSG_ERR_BOOTSTRAP;
        std::memcpy(&p, all[static_cast<size_t>(r)].data(), sizeof p);
        if (std::strncmp(p.host, mine.host, sizeof p.host) != 0)
            where->one_host = false;
        else
            here.push_back(p);
        if (std::string diff = setting_difference(mine, p); !diff.empty()) {
            log_error("rank %d runs with a different %s on rank %d; every rank must use the same",
                      r, diff.c_str(), r);
            return MSG_ERR_CONFIG;
        }
    }
    count_sharers(mine, here, where);
    return MSG_OK;
}

TransportSettings transport_settings(const msg_config_t &cfg, const Placement &where) {
    TransportSettings s;
    s.provider = cfg.provider != nullptr ? cfg.provider : where.one_host ? "shm" : "tcp;ofi_rxm";
    s.shm_cma = cfg.shm_cma != 0;
    s.one_host = where.one_host;
    s.buffer_size = cfg.buffer_size;
    s.connect_timeout_ms = cfg.timeout_ms;
    if (cfg.verbs_device != nullptr) s.verbs_device = cfg.verbs_device;
    if (cfg.verbs_addr != nullptr) s.verbs_addr = cfg.verbs_addr;
    s.mr_cache_entries = cfg.verbs_mr_cache;
    s.mr_cache_bytes = cfg.verbs_mr_cache_bytes;
    return s;
}

// Step 3: the transport the configuration names (none for a job of one).
int open_transport(const msg_config_t &cfg, const Placement &where, Core &core) {
    if (core.boot->size() == 1) return MSG_OK;
    std::string why;
    // auto on one host: libmsg's own shm transport (one copy between processes, and no
    // libfabric loaded).
    const char *kind = chosen_transport(cfg, where.one_host);
    const TransportEntry *entry = find_transport(kind, &why);
    if (entry != nullptr) {
        TransportSettings settings = transport_settings(cfg, where);
        settings.ranks = core.boot->size();
        core.transport = entry->open(settings, &why);
        core.transport_kind = entry->name;
    }
    if (!core.transport) {
        if (std::strcmp(transport_name(cfg), "auto") == 0)
            why +=
                std::string(" (VIADUCT_TRANSPORT auto chose ") + kind + "; name another to use it)";
        log_error("%s", why.c_str());
        return MSG_ERR_TRANSPORT;
    }
    return MSG_OK;
}

// Step 4: the protocol engine over the transport, its receive buffers posted.
int create_engine(const msg_config_t &cfg, Core &core) {
    EngineOptions opts;
    opts.long_protocol = cfg.long_protocol;
    opts.restricted = cfg.restricted != 0;
    opts.eager_max = cfg.eager_max;
    opts.buffer_size = cfg.buffer_size;
    opts.credits = cfg.credits;
    opts.active_peers = active_peers(cfg);
    opts.unexpected_bytes = cfg.unexpected_bytes;
    opts.unexpected_count = cfg.unexpected_count;
    if (cfg.trace != nullptr && cfg.trace[0] != '\0') {
        core.trace = std::make_unique<MessageTrace>(cfg.trace, cfg.trace_records, core.boot->rank(),
                                                    core.boot->size());
        opts.trace = core.trace.get();
    }
    core.engine =
        std::make_unique<Engine>(core.transport.get(), core.boot->rank(), core.boot->size(), opts);
    return core.engine->init();
}

// Round 2 of the bootstrap: fabric addresses; then peer failures reach the
// engine.
int exchange_addresses(const msg_config_t &cfg, Core &core) {
    std::vector<std::vector<uint8_t>> all;
    std::string why;
    int rc = core.boot->allgather(core.transport->address(), all, cfg.timeout_ms, &why);
    if (rc != MSG_OK) {
        log_error("address exchange failed: %s", why.c_str());
        return rc == MSG_ERR_TIMEOUT ? MSG_ERR_BOOTSTRAP : rc;
    }
    if (core.transport->connect(all) != 0) return MSG_ERR_TRANSPORT;
    Core *raw = &core;
    core.boot->on_peer_failed([raw](int r) {
        std::unique_lock<msg::TimedMutex> lk;
        if (!raw->lock(lk) || !raw->engine) return;
        raw->engine->fail_peer(r);
        // Every open collective fails on every survivor, not only on the
        // dead rank's neighbours in its schedule.
        raw->collectives.peer_failed();
    });
    return MSG_OK;
}

// Every connection is up before msg_init returns.
int handshake(const msg_config_t &cfg, Core &core) {
    auto deadline = clock::now() + std::chrono::milliseconds(cfg.timeout_ms);
    {
        std::unique_lock<msg::TimedMutex> lk;
        if (!core.lock(lk)) return MSG_ERR_TRANSPORT;
        core.engine->start_handshake();
    }
    for (;;) {
        std::unique_lock<msg::TimedMutex> lk;
        if (!core.lock(lk)) return MSG_ERR_TRANSPORT;
        core.engine->progress();
        if (core.engine->handshake_done()) {
            core.transport->peers_connected();
            return MSG_OK;
        }
        lk.unlock();
        if (clock::now() > deadline) {
            log_error("could not reach every peer within %d ms", cfg.timeout_ms);
            return MSG_ERR_TIMEOUT;
        }
        sched_yield();
    }
}

// Step 5: connect every peer, then hand the fabric to the progress thread.
int connect_peers(const msg_config_t &cfg, Core &core) {
    if (core.boot->size() == 1) return MSG_OK;
    int rc = exchange_addresses(cfg, core);
    if (rc == MSG_OK) rc = handshake(cfg, core);
    if (rc == MSG_OK) core.start_progress_thread();
    return rc;
}

template <size_t N>
void copy_name(char (&to)[N], const std::string &from) {
    std::strncpy(to, from.c_str(), N - 1);
}

// Step 6: msg_info_t, the settings as this context uses them.
void fill_info(const msg_config_t &cfg, Core &core) {
    msg_info_t &info = core.info;
    info.rank = core.boot->rank();
    info.size = core.boot->size();
    // A job of one opens no transport (messages to itself are copied): it names none of them.
    copy_name(info.provider, core.transport ? core.transport->name() : "self");
    info.long_protocol = cfg.long_protocol;
    info.restricted = cfg.restricted != 0;
    info.eager_max = cfg.eager_max;
    info.timeout_ms = cfg.timeout_ms;
    info.buffer_size = cfg.buffer_size;
    copy_name(info.transport, core.transport ? core.transport_kind : "self");
    copy_name(info.bootstrap, core.boot->method());
    info.credits = cfg.credits;
    info.spin_us = core.wait.spin_us;
    info.spin_yield = core.wait.yield;
    info.heartbeat_ms = heartbeat_ms(cfg.timeout_ms, cfg.heartbeat_ms);
    info.unexpected_bytes = cfg.unexpected_bytes;
    info.unexpected_count = cfg.unexpected_count;
    info.shm_cma = cfg.shm_cma != 0;
    info.verbs_mr_cache = cfg.verbs_mr_cache;
    info.verbs_mr_cache_bytes = cfg.verbs_mr_cache_bytes;
    info.debug = cfg.debug != 0;
    info.log_level = cfg.debug != 0       ? MSG_LOG_DEBUG
                     : cfg.log_level == 0 ? MSG_LOG_WARN
                                          : cfg.log_level;
    info.active_peers = active_peers(cfg);
    info.receive_buffers = core.engine ? core.engine->receive_buffers() : 0;
    info.receive_bytes = info.receive_buffers * cfg.buffer_size;
    // create_engine has made the engine, a job of one's included (with no transport).
    core.protocol_table.clear();
    for (const ProtocolChoice::Range &r : core.engine->protocol_choice().ranges())
        core.protocol_table.push_back({r.max_bytes, r.protocol});
}

// Steps 2 to 6 on a core whose configuration has been read.
int start_core(const msg_config_t &cfg, Core &core, clock::time_point t0) {
    int rc = join_job(cfg, core);
    Placement where;
    if (rc == MSG_OK) rc = agree_on_settings(cfg, core, &where);
    if (rc != MSG_OK) return rc;
    core.wait = choose_wait_policy(cfg.spin_us, where.sharers, where.shared_cpus);
    if ((rc = open_transport(cfg, where, core)) != MSG_OK) return rc;
    if ((rc = create_engine(cfg, core)) != MSG_OK) return rc;
    const auto connect_start = clock::now();
    if ((rc = connect_peers(cfg, core)) != MSG_OK) return rc;
    fill_info(cfg, core);
    core.info.connect_seconds = seconds_since(connect_start);
    core.info.init_seconds = seconds_since(t0);
    return MSG_OK;
}

}  // namespace

}  // namespace msg

extern "C" int msg_init(const msg_config_t *config, msg_context_t **context) {
    using namespace msg;
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    *context = nullptr;
    // Done at load already; again here for a PSM library loaded since (PSM's
    // handlers mask a crash or a kill as exit status 1).
    keep_default_crash_signals();
    const auto t0 = clock::now();
    msg_config_t cfg;
    int rc = read_config(config, &cfg);
    if (rc != MSG_OK) return rc;
    auto core = std::make_shared<Core>();
    core->timeout_ms = cfg.timeout_ms;
    if ((rc = start_core(cfg, *core, t0)) != MSG_OK) return rc;
    try {
        *context = new msg_context{std::move(core)};
    } catch (const std::bad_alloc &) {
        return MSG_ERR_NO_MEMORY;
    }
    return MSG_OK;
}
