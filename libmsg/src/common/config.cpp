// msg_config_t defaults and their VIADUCT_* environment overrides: the one
// place libmsg reads its settings from the environment.
//
// Bootstrap code still reads, itself, the variables that describe the job
// rather than how libmsg runs in it. They are the launcher's contract with
// each process it starts (msgrun, a job started by hand, mpirun or srun),
// differ from rank to rank, and a msg_config_t that every rank shares could
// not carry them:
//   VIADUCT_COORDINATOR, VIADUCT_RANK, VIADUCT_SIZE, VIADUCT_COORDINATOR_HOST
//     (bootstrap/tcp_bootstrap.cpp, bootstrap/bootstrap.cpp): where the
//     coordinator listens, this process's place in the job, and whether
//     rank 0 serves the coordinator itself;
//   VIADUCT_JOB_KEY, VIADUCT_JOB_KEY_FILE (bootstrap/job_key.cpp): the job's
//     secret, which msgrun hands its ranks (a secret is no setting to copy
//     into a struct, and msgrun reads it too);
//   PMIX_NAMESPACE, PMIX_RANK (bootstrap/bootstrap.cpp, and libpmix itself):
//     set by the PMIx server for the process it starts.
#include "common/config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "common/protocol_names.hpp"
#include "viaduct/env.hpp"

namespace {

constexpr unsigned long long kNoLimit = std::numeric_limits<unsigned long long>::max();

using viaduct::env::parse_size;

// Reads variables, remembering whether any failed to parse.
class Environment {
  public:
    explicit Environment(bool report) : report_(report) {}
    int status() const { return status_; }

    // Every variable read goes through here, so that names() knows the settings.
    const char *get(const char *name, bool empty_is_unset) {
        names_.push_back(name);
        return viaduct::env::get(name, empty_is_unset);
    }
    const std::vector<std::string> &names() const { return names_; }

    // A variable that does not parse: MSG_ERR_CONFIG, and the default stays.
    void bad(const char *name, const char *value) {
        if (report_)
            msg::log_error("%s=%s is not valid: the configuration is refused (MSG_ERR_CONFIG)",
                           name, value);
        status_ = MSG_ERR_CONFIG;
    }

    // A number in [lo, hi] (parse_size's syntax).
    template <typename T>
    void number(const char *name, unsigned long long lo, unsigned long long hi, T *out,
                bool empty_is_unset = false) {
        const char *v = get(name, empty_is_unset);
        if (v == nullptr) return;
        unsigned long long n = 0;
        if (parse_size(v, &n) && n >= lo && n <= hi)
            *out = static_cast<T>(n);
        else
            bad(name, v);
    }

    struct Choice {
        const char *text;
        int value;
    };
    // One of a fixed set of words.
    void choice(const char *name, std::initializer_list<Choice> choices, int *out) {
        const char *v = get(name, false);
        if (v == nullptr) return;
        for (const Choice &c : choices)
            if (std::strcmp(v, c.text) == 0) {
                *out = c.value;
                return;
            }
        bad(name, v);
    }

    // One of a fixed set of names; *out then points at the name in `names`
    // (a string literal), so it outlives any change to the environment.
    void one_of(const char *name, std::initializer_list<const char *> names, const char **out) {
        const char *v = get(name, true);
        if (v == nullptr) return;
        for (const char *n : names)
            if (std::strcmp(v, n) == 0) {
                *out = n;
                return;
            }
        bad(name, v);
    }

    // Free text; unset and empty keep the default.
    void text(const char *name, const char **out) {
        if (const char *v = get(name, true)) *out = v;
    }

    // On/off: "0" is off, any other value on.
    void on_off(const char *name, int *out) {
        names_.push_back(name);
        *out = viaduct::env::flag(name, *out != 0);
    }

  private:
    std::vector<std::string> names_;
    bool report_;
    int status_ = MSG_OK;
};

void set_defaults(msg_config_t *c) {
    *c = msg_config_t{};
    c->provider = nullptr;
    c->long_protocol = MSG_PROTOCOL_AUTO;
    c->restricted = 0;
    c->eager_max = 8192;
    c->buffer_size = 128 * 1024;
    c->credits = 8;
    c->timeout_ms = 10000;
    c->spin_us = MSG_SPIN_AUTO;
    c->transport = "auto";
    c->bootstrap = "auto";
    c->heartbeat_ms = 0;
    c->unexpected_bytes = 1u << 20;
    c->unexpected_count = 1024;
    c->shm_cma = 1;
    c->verbs_device = nullptr;
    c->verbs_addr = nullptr;
    c->verbs_mr_cache = 64;
    c->verbs_mr_cache_bytes = 1u << 30;
    c->debug = 0;
    c->trace = nullptr;
    c->trace_records = 1000000;
    c->log_level = MSG_LOG_WARN;
    c->active_peers = 16;
}

// The engine: protocol, mode, buffers, flow control, waiting.
void read_messaging(Environment &env, msg_config_t *c) {
    env.text("VIADUCT_PROVIDER", &c->provider);
    if (const char *v = env.get("VIADUCT_PROTOCOL", false); v != nullptr) {
        if (const msg::ProtocolNames *n = msg::protocol_by_setting(v))
            c->long_protocol = n->protocol;
        else
            env.bad("VIADUCT_PROTOCOL", v);
    }
    env.choice("VIADUCT_RESTRICTED", {{"1", 1}, {"restricted", 1}, {"0", 0}, {"unrestricted", 0}},
               &c->restricted);
    env.number("VIADUCT_EAGER_MAX", 0, kNoLimit, &c->eager_max);
    env.number("VIADUCT_BUFFER_SIZE", 0, kNoLimit, &c->buffer_size);
    env.number("VIADUCT_CREDITS", 1, 1024, &c->credits);
    env.number("VIADUCT_ACTIVE_PEERS", 1, 1 << 24, &c->active_peers);
    env.number("VIADUCT_TIMEOUT_MS", 1, 86400000, &c->timeout_ms);
    if (const char *v = env.get("VIADUCT_SPIN_US", false); v && !std::strcmp(v, "auto"))
        c->spin_us = MSG_SPIN_AUTO;
    else
        env.number("VIADUCT_SPIN_US", 0, 1000000, &c->spin_us);
    env.number("VIADUCT_UNEXPECTED_BYTES", 1, kNoLimit, &c->unexpected_bytes, true);
    env.number("VIADUCT_UNEXPECTED_COUNT", 1, kNoLimit, &c->unexpected_count, true);
}

// Joining the job, the transport under the engine, diagnostics.
void read_fabric(Environment &env, msg_config_t *c) {
    env.one_of("VIADUCT_TRANSPORT", {"auto", "ofi", "verbs", "shm"}, &c->transport);
    env.one_of("VIADUCT_BOOTSTRAP", {"auto", "tcp", "pmix", "single"}, &c->bootstrap);
    env.number("VIADUCT_HEARTBEAT_MS", 1, 86400000, &c->heartbeat_ms, true);
    env.on_off("VIADUCT_SHM_CMA", &c->shm_cma);
    env.text("VIADUCT_VERBS_DEVICE", &c->verbs_device);
    env.text("VIADUCT_VERBS_ADDR", &c->verbs_addr);
    env.number("VIADUCT_VERBS_MR_CACHE", 0, kNoLimit, &c->verbs_mr_cache, true);
    env.number("VIADUCT_VERBS_MR_CACHE_BYTES", 0, kNoLimit, &c->verbs_mr_cache_bytes, true);
    env.on_off("VIADUCT_DEBUG", &c->debug);
    env.text("VIADUCT_TRACE", &c->trace);
    env.number("VIADUCT_TRACE_RECORDS", 1, kNoLimit, &c->trace_records, true);
    env.choice("VIADUCT_LOG_LEVEL",
               {{"error", MSG_LOG_ERROR},
                {"warn", MSG_LOG_WARN},
                {"info", MSG_LOG_INFO},
                {"debug", MSG_LOG_DEBUG}},
               &c->log_level);
}

// Edits (insertions, deletions, substitutions) that turn a into b.
size_t edit_distance(const std::string &a, const std::string &b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = up;
        }
    }
    return row[b.size()];
}

// A VIADUCT_* variable that is no setting but a typo away from one is named, with the setting
// it resembles: it would otherwise be ignored without a word. Other VIADUCT_* variables (the
// tools' and the tests') are left alone.
void warn_misspelled(const std::vector<std::string> &settings) {
    for (char **e = environ; e != nullptr && *e != nullptr; ++e) {
        const char *eq = std::strchr(*e, '=');
        if (std::strncmp(*e, "VIADUCT_", 8) != 0 || eq == nullptr) continue;
        const std::string name(*e, static_cast<size_t>(eq - *e));
        if (std::find(settings.begin(), settings.end(), name) != settings.end()) continue;
        const std::string *closest = nullptr;
        size_t best = 3;  // at most two edits away
        for (const std::string &s : settings)
            if (const size_t d = edit_distance(name, s); d < best) best = d, closest = &s;
        if (closest != nullptr)
            msg::log_warn("%s is not a libmsg setting and is ignored; did you mean %s?",
                          name.c_str(), closest->c_str());
    }
}

}  // namespace

namespace msg {

int config_from_environment(msg_config_t *c, bool report) {
    if (c == nullptr) return MSG_ERR_INVALID_ARG;
    set_defaults(c);
    Environment env(report);
    read_messaging(env, c);
    read_fabric(env, c);
    if (report) warn_misspelled(env.names());
    return env.status();
}

std::vector<std::string> setting_names() {
    msg_config_t c;
    set_defaults(&c);
    Environment env(false);
    read_messaging(env, &c);
    read_fabric(env, &c);
    std::vector<std::string> names;  // VIADUCT_SPIN_US is read twice ("auto", then a number)
    for (const std::string &n : env.names())
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    return names;
}

int check_messaging(const msg_config_t &c, std::string *why) {
    if (msg::protocol_names(c.long_protocol) == nullptr)
        *why =
            "long_protocol must be MSG_PROTOCOL_AUTO, MSG_PROTOCOL_SENDRECV, MSG_PROTOCOL_RDMA "
            "or MSG_PROTOCOL_RDMA_WRITE";
    else if (c.buffer_size < 1024 || c.buffer_size > (64u << 20))
        *why = "buffer_size must be between 1 KiB and 64 MiB";
    else if (c.eager_max > c.buffer_size - kPacketHeaderBytes)
        *why = "eager_max must fit in a buffer: at most buffer_size - " +
               std::to_string(kPacketHeaderBytes);
    else if (c.credits < 1 || c.credits > 1024)
        *why = "credits must be between 1 and 1024";
    else if (c.active_peers < 0)
        *why = "active_peers must not be negative (0: the default)";
    else if (c.unexpected_bytes < 1 || c.unexpected_count < 1)
        *why = "unexpected_bytes and unexpected_count must be at least 1";
    else
        return MSG_OK;
    return MSG_ERR_CONFIG;
}

int active_peers(const msg_config_t &c) {
    return c.active_peers > 0 ? c.active_peers : 16;
}

const char *transport_name(const msg_config_t &c) {
    return c.transport != nullptr && *c.transport != '\0' ? c.transport : "auto";
}

const char *chosen_transport(const msg_config_t &c, bool one_host) {
    const char *name = transport_name(c);
    if (std::strcmp(name, "auto") != 0) return name;
    const bool provider_named = c.provider != nullptr && c.provider[0] != '\0';
    return one_host && !provider_named ? "shm" : "ofi";
}

int heartbeat_ms(int timeout_ms, int heartbeat_setting) {
    if (heartbeat_setting > 0) return std::max(heartbeat_setting, 100);
    return std::max(timeout_ms, 10000);
}

}  // namespace msg

extern "C" int msg_config_init(msg_config_t *c) {
    return msg::config_from_environment(c, true);
}
