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

    static constexpr const char *usage =
        "  --provider NAME       libfabric provider: shm, \"tcp;ofi_rxm\", ... (VIADUCT_PROVIDER)\n"
        "  --protocol P          long-message protocol (VIADUCT_PROTOCOL): sendrecv (chunks\n"
        "                        through pre-posted buffers), rdma (the receiver RDMA-reads)\n"
        "                        or rdma-write (the sender RDMA-writes)\n"
        "  --restricted          one long send and one long receive at a time "
        "(VIADUCT_RESTRICTED=1)\n"
        "  --unrestricted        any number of long messages at once (VIADUCT_RESTRICTED=0)\n"
        "  --eager-max BYTES     largest eager message (VIADUCT_EAGER_MAX)\n"
        "  --buffer-size BYTES   pre-posted receive buffer / chunk size (VIADUCT_BUFFER_SIZE)\n"
        "  --credits N           receive buffers per peer (VIADUCT_CREDITS)\n"
        "  --peer-timeout-ms N   join and dead-peer timeout (VIADUCT_TIMEOUT_MS)\n";

    // Consumes one fabric option if the next argument is one.
    bool parse(Args &args) {
        std::string text;
        size_t bytes = 0;
        long n = 0;
        if (args.value("--provider", text)) {
            if (text.empty()) throw UsageError("--provider needs a non-empty name");
            provider = text;
        } else if (args.value("--protocol", text)) {
            if (text == "sendrecv") {
                long_protocol = MSG_PROTOCOL_SENDRECV;
            } else if (text == "rdma") {
                long_protocol = MSG_PROTOCOL_RDMA;
            } else if (text == "rdma-write") {
                long_protocol = MSG_PROTOCOL_RDMA_WRITE;
            } else {
                throw UsageError("--protocol: '" + text + "' is not sendrecv, rdma or rdma-write");
            }
        } else if (args.flag("--restricted")) {
            restricted = 1;
        } else if (args.flag("--unrestricted")) {
            restricted = 0;
        } else if (args.size_value("--eager-max", bytes)) {
            eager_max = bytes;
        } else if (args.size_value("--buffer-size", bytes)) {
            buffer_size = bytes;
        } else if (args.long_value("--credits", 1, 1024, n)) {
            credits = n;
        } else if (args.long_value("--peer-timeout-ms", 1, 86400000, n)) {
            timeout_ms = n;
        } else {
            return false;
        }
        return true;
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
    switch (long_protocol) {
        case MSG_PROTOCOL_RDMA:
            return "rdma";
        case MSG_PROTOCOL_RDMA_WRITE:
            return "rdma-write";
        default:
            return "sendrecv";
    }
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
// msg_init has succeeded, the rank. parse(argc, argv, help) returns Options;
// run(options, rank) returns the exit status and sets rank when known.
template <typename Parse, typename Run>
int benchmark_main(const char *name, const char *usage, int argc, char **argv, Parse parse,
                   Run run) {
    decltype(parse(argc, argv, std::declval<bool &>())) options;
    try {
        bool help = false;
        options = parse(argc, argv, help);
        if (help) {
            if (launched_as_rank0()) {
                std::fputs(usage, stdout);
                std::fputs(FabricOptions::usage, stdout);
            }
            return 0;
        }
    } catch (const UsageError &e) {
        if (launched_as_rank0()) std::fprintf(stderr, "%s: %s (see --help)\n", name, e.what());
        return 2;
    }
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
