// What every worker scenario shares: joining the job, checks that name what failed and exit,
// waiting for completions with a bound, and sizes scaled for slow (sanitizer) builds.
#pragma once

#include <msg/msg.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace worker {

using Args = std::vector<std::string>;

// Every line starts with "[rank R] " so the driver can tell ranks apart in msgrun's output.
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Prints "[rank R] FAIL file:line: (expr) message" and exits 1.
[[noreturn]] void fail_at(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

// WCHECK(cond, "fmt", ...): the scenario fails, naming the check, unless cond holds.
#define WCHECK(cond, ...)                                                       \
    do {                                                                        \
        if (!(cond)) ::worker::fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

// WSTATUS(call, expected): the call must return exactly `expected`.
#define WSTATUS(call, expected)                                                                \
    do {                                                                                       \
        const int wstatus_rc = (call);                                                         \
        const int wstatus_want = (expected);                                                   \
        if (wstatus_rc != wstatus_want)                                                        \
            ::worker::fail_at(__FILE__, __LINE__, #call, "returned %d (%s), expected %d (%s)", \
                              wstatus_rc, msg_strerror(wstatus_rc), wstatus_want,              \
                              msg_strerror(wstatus_want));                                     \
    } while (0)

// VIADUCT_TEST_SLOWDOWN (>= 1): how much slower this build runs than a plain release build.
int slowdown();
// n shrunk by the slowdown, but never below `minimum`: sanitizer runs do less work, not less kinds.
size_t scaled(size_t n, size_t minimum);
// Longest a scenario waits for one completion before it calls the library stuck.
int completion_timeout_ms();
double now_seconds();
size_t parse_size_arg(const Args &args, size_t index, size_t fallback);

// One scenario a worker program can run: `PROGRAM SCENARIO [ARGS...]`.
struct Scenario {
    const char *name;
    void (*run)(const Args &);
    const char *usage;
};
// A worker's main(): runs the scenario argv[1] names. It says "pid P" first (the driver cleans
// up after ranks that die without closing the fabric) and "PASS NAME" last (the driver counts
// these lines: a rank that never got there did not pass). 2 for a usage error.
int run_scenario(const char *program, const Scenario *begin, const Scenario *end, int argc,
                 char **argv);

// Fails the scenario, naming `what`, if it is still alive after `seconds`: a blocking call
// that hangs then reports itself instead of waiting for msgrun's timeout.
class Watchdog {
  public:
    Watchdog(double seconds, std::string what);
    ~Watchdog();
    Watchdog(const Watchdog &) = delete;
    Watchdog &operator=(const Watchdog &) = delete;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// One rank's membership of the job, from msg_init to msg_destroy.
class Job {
  public:
    Job();
    ~Job();
    Job(const Job &) = delete;
    Job &operator=(const Job &) = delete;

    // msg_finalize must succeed; the destructor only releases the handle.
    void finalize();
    // For the survivors of a killed rank: msg_finalize must succeed, or say a rank was lost
    // (MSG_ERR_PEER_FAILED: the coordinator learned of the death only once a survivor had
    // reached finalize's barrier, which the survivors may well do first).
    void finalize_after_loss();
    msg_context_t *ctx() const { return ctx_; }

    int rank = -1;
    int size = 0;
    msg_info_t info{};

  private:
    msg_context_t *ctx_ = nullptr;
};

// A completion queue that must be empty and destroyable when the scenario is done with it.
class Cq {
  public:
    explicit Cq(msg_context_t *ctx);
    ~Cq();
    Cq(const Cq &) = delete;
    Cq &operator=(const Cq &) = delete;

    msg_cq_t *get() const { return cq_; }
    // msg_cq_destroy must succeed.
    void destroy();

  private:
    msg_cq_t *cq_ = nullptr;
};

// Waits for one completion; fails the scenario (naming `what`) if none comes in time.
msg_completion_t wait_completion(msg_cq_t *cq, const char *what);
std::string describe(const msg_completion_t &c);

// The context's counters now (msg_get_stats must succeed).
msg_stats_t get_stats(const Job &job);
// Polls msg_get_stats until stats.*counter reaches `target`: how a scenario learns that
// messages have arrived (say, before their receive is posted) instead of sleeping and hoping.
// Fails the scenario, naming `what`, after completion_timeout_ms().
void wait_for_stat(const Job &job, uint64_t msg_stats_t::*counter, uint64_t target,
                   const char *what);
// Between two snapshots exactly `unexpected` messages arrived before a matching receive was
// posted and exactly `expected` were taken by one already posted: the path a phase meant to
// test is the one it took.
void check_arrivals(const msg_stats_t &before, const msg_stats_t &after, uint64_t unexpected,
                    uint64_t expected, const char *what);
// Between two snapshots exactly `n` long messages were received (or sent), each by a protocol
// of the job's table in force (msg_get_protocol_table: the configured protocol, or auto's by
// size) or by send/recv, which replaces an RDMA protocol where the transport lacks its
// operation; none by another.
void check_long_protocol(const Job &job, const msg_stats_t &before, const msg_stats_t &after,
                         bool received, uint64_t n, const char *what);

// A byte buffer that is not zeroed on allocation (the 1 GiB case would pay for it).
struct Buffer {
    explicit Buffer(size_t n)
        : data(std::make_unique_for_overwrite<unsigned char[]>(n ? n : 1)), size(n) {}
    std::unique_ptr<unsigned char[]> data;
    size_t size;
    unsigned char *get() const { return data.get(); }
};

// The sizes the driver chose (VIADUCT_EAGER_MAX, VIADUCT_BUFFER_SIZE, VIADUCT_PROTOCOL,
// VIADUCT_RESTRICTED) must be the ones msg_get_info reports; then tests of "eager max + 1"
// really straddle the library's threshold.
void check_info_matches_environment(const msg_info_t &info);

}  // namespace worker
