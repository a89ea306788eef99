// Job start-up, bounded waits and failure reporting shared by the worker scenarios.
#include "harness.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "viaduct/clock.hpp"
#include "viaduct/env.hpp"

namespace worker {
namespace {

// Known before msg_init from msgrun's environment, so even start-up failures name their rank.
int g_rank = [] {
    const char *r = std::getenv("VIADUCT_RANK");
    return r != nullptr ? std::atoi(r) : 0;
}();

void vprint(const char *prefix, const char *fmt, va_list ap) {
    char line[2048];
    int n = std::snprintf(line, sizeof line, "[rank %d] %s", g_rank, prefix);
    if (n < 0) n = 0;
    std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), fmt, ap);
    // One write per line keeps lines from different ranks whole in the shared pipe.
    std::string out = std::string(line) + "\n";
    std::fflush(stdout);
    ssize_t ignored = ::write(STDOUT_FILENO, out.data(), out.size());
    (void)ignored;
}

}  // namespace

void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint("", fmt, ap);
    va_end(ap);
}

void fail_at(const char *file, int line, const char *expr, const char *fmt, ...) {
    const char *base = std::strrchr(file, '/');
    char prefix[512];
    std::snprintf(prefix, sizeof prefix, "FAIL %s:%d: (%s) ", base ? base + 1 : file, line, expr);
    va_list ap;
    va_start(ap, fmt);
    vprint(prefix, fmt, ap);
    va_end(ap);
    // No orderly shutdown: the library may be the thing that is broken.
    std::_Exit(1);
}

int slowdown() {
    static const int factor = static_cast<int>(viaduct::env::positive("VIADUCT_TEST_SLOWDOWN", 1));
    return factor;
}

size_t scaled(size_t n, size_t minimum) {
    size_t s = n / static_cast<size_t>(slowdown());
    return s < minimum ? minimum : s;
}

int completion_timeout_ms() {
    return 30000 * slowdown();
}

double now_seconds() {
    return viaduct::now_seconds();
}

size_t parse_size_arg(const Args &args, size_t index, size_t fallback) {
    if (index >= args.size()) return fallback;
    char *end = nullptr;
    unsigned long long v = std::strtoull(args[index].c_str(), &end, 10);
    WCHECK(end != args[index].c_str() && *end == '\0', "argument %zu is not a number: '%s'", index,
           args[index].c_str());
    return static_cast<size_t>(v);
}

struct Watchdog::State {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::thread thread;
};

Watchdog::Watchdog(double seconds, std::string what) : state_(std::make_unique<State>()) {
    State *s = state_.get();
    s->thread = std::thread([s, seconds, what = std::move(what)] {
        std::unique_lock<std::mutex> lk(s->mu);
        if (!s->cv.wait_for(lk, std::chrono::duration<double>(seconds), [s] { return s->done; }))
            fail_at(__FILE__, __LINE__, "watchdog", "%s did not return within %.1f s", what.c_str(),
                    seconds);
    });
}

Watchdog::~Watchdog() {
    {
        std::lock_guard<std::mutex> lk(state_->mu);
        state_->done = true;
    }
    state_->cv.notify_all();
    state_->thread.join();
}

Job::Job() {
    WSTATUS(msg_init(nullptr, &ctx_), MSG_OK);
    WCHECK(ctx_ != nullptr, "msg_init succeeded but returned no context");
    WSTATUS(msg_rank(ctx_, &rank), MSG_OK);
    WSTATUS(msg_size(ctx_, &size), MSG_OK);
    WSTATUS(msg_get_info(ctx_, &info), MSG_OK);
    g_rank = rank;
    WCHECK(info.rank == rank && info.size == size,
           "msg_get_info says rank %d of %d, msg_rank/size %d of %d", info.rank, info.size, rank,
           size);
    const char *env_size = std::getenv("VIADUCT_SIZE");
    if (env_size != nullptr)
        WCHECK(size == std::atoi(env_size), "job size %d but msgrun started %s ranks", size,
               env_size);
}

Job::~Job() {
    if (ctx_ != nullptr) msg_destroy(ctx_);
}

void Job::finalize() {
    Watchdog watchdog(completion_timeout_ms() / 1000.0, "msg_finalize");
    WSTATUS(msg_finalize(ctx_), MSG_OK);
}

void Job::finalize_after_loss() {
    Watchdog watchdog(completion_timeout_ms() / 1000.0, "msg_finalize");
    const int rc = msg_finalize(ctx_);
    WCHECK(rc == MSG_OK || rc == MSG_ERR_PEER_FAILED, "msg_finalize among survivors: %d (%s)", rc,
           msg_strerror(rc));
}

Cq::Cq(msg_context_t *ctx) {
    WSTATUS(msg_cq_create(ctx, &cq_), MSG_OK);
    WCHECK(cq_ != nullptr, "msg_cq_create succeeded but returned no CQ");
}

Cq::~Cq() {
    if (cq_ != nullptr) msg_cq_destroy(cq_);
}

void Cq::destroy() {
    WSTATUS(msg_cq_destroy(cq_), MSG_OK);
    cq_ = nullptr;
}

msg_completion_t wait_completion(msg_cq_t *cq, const char *what) {
    msg_completion_t c{};
    int rc = msg_cq_wait(cq, completion_timeout_ms(), &c);
    WCHECK(rc == MSG_OK, "waiting for %s: msg_cq_wait returned %d (%s) after %d ms", what, rc,
           msg_strerror(rc), completion_timeout_ms());
    return c;
}

std::string describe(const msg_completion_t &c) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "{op %d, status %d (%s), source %d, tag %d, bytes %zu, data %llu}", c.op,
                  c.status, msg_strerror(c.status), c.source, c.tag, c.bytes,
                  static_cast<unsigned long long>(c.data));
    return text;
}

// A size variable as libmsg reads it ("16KiB" included).
static unsigned long long size_of(const char *v) {
    unsigned long long n = 0;
    WCHECK(viaduct::env::parse_size(v, &n), "a size libmsg accepted does not parse: %s", v);
    return n;
}

void check_info_matches_environment(const msg_info_t &info) {
    if (const char *v = std::getenv("VIADUCT_EAGER_MAX"))
        WCHECK(info.eager_max == size_of(v), "msg_get_info eager_max %zu, VIADUCT_EAGER_MAX=%s",
               info.eager_max, v);
    if (const char *v = std::getenv("VIADUCT_BUFFER_SIZE"))
        WCHECK(info.buffer_size == size_of(v),
               "msg_get_info buffer_size %zu, VIADUCT_BUFFER_SIZE=%s", info.buffer_size, v);
    if (const char *v = std::getenv("VIADUCT_PROTOCOL")) {
        const char *name = msg_protocol_name(info.long_protocol);
        WCHECK(name != nullptr && std::strcmp(name, v) == 0,
               "msg_get_info long_protocol %d (%s), VIADUCT_PROTOCOL=%s", info.long_protocol,
               name != nullptr ? name : "none", v);
    }
    if (const char *v = std::getenv("VIADUCT_ACTIVE_PEERS"))
        WCHECK(info.active_peers == std::atoi(v),
               "msg_get_info active_peers %d, VIADUCT_ACTIVE_PEERS=%s", info.active_peers, v);
    if (const char *v = std::getenv("VIADUCT_RESTRICTED"))
        WCHECK((info.restricted != 0) == (std::atoi(v) != 0),
               "msg_get_info restricted %d, VIADUCT_RESTRICTED=%s", info.restricted, v);
    if (const char *v = std::getenv("VIADUCT_PROVIDER")) {
        // "tcp;ofi_rxm" runs on the tcp core provider: the first name must show up.
        std::string first(v, std::strcspn(v, ";"));
        WCHECK(std::strstr(info.provider, first.c_str()) != nullptr,
               "msg_get_info provider '%s', VIADUCT_PROVIDER=%s", info.provider, v);
    }
}

msg_stats_t get_stats(const Job &job) {
    msg_stats_t stats{};
    WSTATUS(msg_get_stats(job.ctx(), &stats), MSG_OK);
    return stats;
}

void wait_for_stat(const Job &job, uint64_t msg_stats_t::*counter, uint64_t target,
                   const char *what) {
    const double deadline = now_seconds() + completion_timeout_ms() / 1000.0;
    uint64_t seen = get_stats(job).*counter;
    while (seen < target) {
        WCHECK(now_seconds() < deadline, "%s: the count stayed at %" PRIu64 ", waited for %" PRIu64,
               what, seen, target);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        seen = get_stats(job).*counter;
    }
}

void check_arrivals(const msg_stats_t &before, const msg_stats_t &after, uint64_t unexpected,
                    uint64_t expected, const char *what) {
    const uint64_t u = after.unexpected_messages - before.unexpected_messages;
    const uint64_t e = after.expected_messages - before.expected_messages;
    WCHECK(u == unexpected && e == expected,
           "%s: %" PRIu64 " messages arrived unexpected and %" PRIu64
           " to a posted receive, expected %" PRIu64 " and %" PRIu64,
           what, u, e, unexpected, expected);
}

namespace {

// Long messages counted per protocol, indexed by MSG_PROTOCOL_*.
std::array<uint64_t, 3> long_counts(const msg_stats_t &s, bool received) {
    if (received)
        return {s.long_received_sendrecv, s.long_received_rdma_read, s.long_received_rdma_write};
    return {s.long_sent_sendrecv, s.long_sent_rdma_read, s.long_sent_rdma_write};
}

void scenario_usage(const char *program, const Scenario *begin, const Scenario *end) {
    std::fprintf(stderr, "usage: %s SCENARIO [ARGS...]\nscenarios:\n", program);
    for (const Scenario *s = begin; s != end; ++s)
        std::fprintf(stderr, "  %s %s\n", s->name, s->usage);
}

}  // namespace

void check_long_protocol(const Job &job, const msg_stats_t &before, const msg_stats_t &after,
                         bool received, uint64_t n, const char *what) {
    msg_protocol_range_t table[8];
    size_t ranges = 0;
    WCHECK(msg_get_protocol_table(job.ctx(), table, 8, &ranges) == MSG_OK && ranges >= 1 &&
               ranges <= 8,
           "%s: msg_get_protocol_table gave %zu ranges", what, ranges);
    bool allowed[3] = {true, false, false};  // send/recv stands in for either RDMA protocol
    for (size_t i = 0; i < ranges && i < 8; ++i)
        if (table[i].protocol >= 0 && table[i].protocol < 3) allowed[table[i].protocol] = true;
    const std::array<uint64_t, 3> a = long_counts(after, received),
                                  b = long_counts(before, received);
    uint64_t d[3], total = 0;
    for (size_t p = 0; p < 3; ++p) total += d[p] = a[p] - b[p];
    const bool stray = (!allowed[MSG_PROTOCOL_RDMA] && d[MSG_PROTOCOL_RDMA] != 0) ||
                       (!allowed[MSG_PROTOCOL_RDMA_WRITE] && d[MSG_PROTOCOL_RDMA_WRITE] != 0);
    WCHECK(total == n && !stray,
           "%s: long messages %s by send/recv %" PRIu64 ", RDMA read %" PRIu64
           ", RDMA write %" PRIu64 "; expected %" PRIu64 " by the table's protocols (%s)",
           what, received ? "received" : "sent", d[0], d[1], d[2], n,
           msg_protocol_name(job.info.long_protocol));
}

int run_scenario(const char *program, const Scenario *begin, const Scenario *end, int argc,
                 char **argv) {
    if (argc < 2) {
        scenario_usage(program, begin, end);
        return 2;
    }
    for (const Scenario *s = begin; s != end; ++s) {
        if (std::strcmp(s->name, argv[1]) != 0) continue;
        Args args(argv + 2, argv + argc);
        say("pid %d", static_cast<int>(getpid()));
        s->run(args);
        say("PASS %s", s->name);
        return 0;
    }
    std::fprintf(stderr, "unknown scenario '%s'\n", argv[1]);
    scenario_usage(program, begin, end);
    return 2;
}

}  // namespace worker
