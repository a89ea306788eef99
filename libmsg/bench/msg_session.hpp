// What the libmsg benchmarks share: the fabric options every one of them takes, status checks,
// and RAII owners for a joined job (context) and a completion queue.
#pragma once

#include <msg/msg.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "bench_util.hpp"

namespace viaduct::bench {

inline void check(int status, const char *what) {
    if (status != MSG_OK) throw Error(std::string(what) + ": " + msg_strerror(status));
}

// Before msg_init a process does not know its rank; msgrun exports it, and only rank 0
// should print a usage error that every rank finds in the same arguments.
inline bool launched_as_rank0() {
    const char *rank = std::getenv("VIADUCT_RANK");
    return rank == nullptr || std::strcmp(rank, "0") == 0;
}

// Run-time libmsg choices given on the command line; each overrides its VIADUCT_* variable.
struct FabricOptions {
    std::optional<std::string> provider;
    std::optional<int> long_protocol;
    std::optional<int> restricted;
    std::optional<size_t> eager_max;
    std::optional<size_t> buffer_size;
    std::optional<long> credits;
    std::optional<long> timeout_ms;

    // The fabric options, in a group of their own in --help.
    void add(CLI::App &app) {
        CLI::Option_group *g =
            app.add_option_group("libmsg options", "each overrides its VIADUCT_* variable");
        g->add_option_function<std::string>(
             "--provider",
             [this](const std::string &text) {
                 if (text.empty()) throw CLI::ValidationError("--provider needs a name");
                 provider = text;
             },
             "libfabric provider: shm, \"tcp;ofi_rxm\", ... (VIADUCT_PROVIDER)")
            ->type_name("NAME");
        g->add_option_function<std::string>(
             "--protocol", [this](const std::string &text) { long_protocol = protocol(text); },
             "long-message protocol (VIADUCT_PROTOCOL): auto (the default: by message size, "
             "from the fabric's table), sendrecv (chunks through pre-posted buffers), rdma (the "
             "receiver RDMA-reads) or rdma-write (the sender RDMA-writes)")
            ->type_name("P");
        g->add_flag_function(
            "--restricted", [this](std::int64_t) { restricted = 1; },
            "one long send and one long receive at a time (VIADUCT_RESTRICTED=1)");
        g->add_flag_function(
            "--unrestricted", [this](std::int64_t) { restricted = 0; },
            "any number of long messages at once (VIADUCT_RESTRICTED=0)");
        add_size(*g, "--eager-max", eager_max, "largest eager message (VIADUCT_EAGER_MAX)");
        add_size(*g, "--buffer-size", buffer_size,
                 "pre-posted receive buffer / chunk size (VIADUCT_BUFFER_SIZE)");
        g->add_option_function<long>(
             "--credits", [this](long n) { credits = n; },
             "receive buffers per peer (VIADUCT_CREDITS)")
            ->check(CLI::Range(1, 1024))
            ->type_name("N");
        g->add_option_function<long>(
             "--peer-timeout-ms", [this](long n) { timeout_ms = n; },
             "join and dead-peer timeout (VIADUCT_TIMEOUT_MS)")
            ->check(CLI::Range(1, 86400000))
            ->type_name("MS");
    }

    // The protocol msg_protocol_name calls `text`.
    static int protocol(const std::string &text) {
        for (int p :
             {MSG_PROTOCOL_AUTO, MSG_PROTOCOL_SENDRECV, MSG_PROTOCOL_RDMA, MSG_PROTOCOL_RDMA_WRITE})
            if (text == msg_protocol_name(p)) return p;
        throw CLI::ValidationError("--protocol: '" + text +
                                   "' is not auto, sendrecv, rdma or rdma-write");
    }

    static void add_size(CLI::App &app, const std::string &name, std::optional<size_t> &out,
                         const std::string &description) {
        app.add_option_function<std::string>(
               name,
               [name, &out](const std::string &text) {
                   auto v = viaduct::cli::size(text);
                   if (!v) throw CLI::ValidationError(viaduct::cli::size_problem(name, text, 0, 0));
                   out = static_cast<size_t>(*v);
               },
               description)
            ->type_name("SIZE");
    }

    // Defaults, then VIADUCT_* variables, then the command line. The returned config points
    // into this object's provider string, so it must outlive msg_init.
    msg_config_t config() const {
        msg_config_t c;
        check(msg_config_init(&c), "msg_config_init (a VIADUCT_* variable)");
        if (provider) c.provider = provider->c_str();
        if (long_protocol) c.long_protocol = *long_protocol;
        if (restricted) c.restricted = *restricted;
        if (eager_max) c.eager_max = *eager_max;
        if (buffer_size) c.buffer_size = *buffer_size;
        if (credits) c.credits = static_cast<int>(*credits);
        if (timeout_ms) c.timeout_ms = static_cast<int>(*timeout_ms);
        return c;
    }
};

inline const char *protocol_name(int long_protocol) {
    const char *name = msg_protocol_name(long_protocol);
    return name != nullptr ? name : "?";
}

inline const char *mode_name(int restricted) {
    return restricted ? "restricted" : "unrestricted";
}

// Owns a joined job; msg_destroy finalizes first if the program did not get that far.
class Context {
  public:
    explicit Context(const msg_config_t &config) { check(msg_init(&config, &ctx_), "msg_init"); }
    ~Context() { msg_destroy(ctx_); }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    msg_context_t *get() const { return ctx_; }

    msg_info_t info() const {
        msg_info_t i;
        check(msg_get_info(ctx_, &i), "msg_get_info");
        return i;
    }

    // The orderly ending, whose status a destructor could not report.
    void finalize() { check(msg_finalize(ctx_), "msg_finalize"); }

  private:
    msg_context_t *ctx_ = nullptr;
};

class CompletionQueue {
  public:
    explicit CompletionQueue(Context &context) {
        check(msg_cq_create(context.get(), &cq_), "msg_cq_create");
    }
    // After an error operations may still be bound to the queue (MSG_ERR_BUSY); the context
    // reclaims it then, so the status is deliberately not acted on here.
    ~CompletionQueue() { (void)msg_cq_destroy(cq_); }
    CompletionQueue(const CompletionQueue &) = delete;
    CompletionQueue &operator=(const CompletionQueue &) = delete;

    msg_cq_t *get() const { return cq_; }

  private:
    msg_cq_t *cq_ = nullptr;
};

// The main() the libmsg benchmarks share: options, --help (printed by rank 0
// only), the run, and every error as one line naming the program and, once
// msg_init has succeeded, the rank. add(app, options) registers the program's own options
// (Options has a check() that throws UsageError); run(options, rank) returns the exit status
// and sets rank when known.
template <typename Options, typename Run>
int benchmark_main(const char *name, const char *description, int argc, char **argv,
                   void (*add)(CLI::App &, Options &), Run run) {
    Options options;
    int rc = parse_command_line(
        name, description, argc, argv, options,
        [add](CLI::App &app, Options &o) {
            add(app, o);
            o.fabric.add(app);
        },
        launched_as_rank0());
    if (rc >= 0) return rc;
    int rank = -1;
    try {
        return run(options, rank);
    } catch (const std::exception &e) {
        if (rank >= 0)
            std::fprintf(stderr, "%s: rank %d: %s\n", name, rank, e.what());
        else
            std::fprintf(stderr, "%s: %s\n", name, e.what());
        return 1;
    }
}

}  // namespace viaduct::bench
