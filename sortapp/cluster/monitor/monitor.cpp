// The monitor: runs the job's steps in order — check, phases 1 and 2, phase 3a, phase 3b,
// commit (phases/*.cpp); with the river algorithm check, sampling, river sort, commit — then
// says the final word and prints the report. A step that fails aborts the job: every node
// removes what it created, and no output is left.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <span>

#include "liveness.hpp"
#include "monitor/state.hpp"
#include "node.hpp"
#include "phases/phases.hpp"

namespace sortapp::cluster {

namespace {

// The steps of a job, in order, each under the phase name a node or test sees.
struct Step {
    const char *phase;
    Status (*run)(Monitor &);
};
constexpr Step kThreePhaseSteps[] = {
    {"checking", monitor_check}, {"phases 1 and 2", monitor_local}, {"phase 3a", monitor_select},
    {"phase 3b", monitor_merge}, {"commit", monitor_commit},
};
constexpr Step kRiverSteps[] = {
    {"checking", monitor_check},
    {"sampling", monitor_sample},
    {"river sort", monitor_river},
    {"commit", monitor_commit},
};

}  // namespace

int Monitor::run() {
    tty_ = isatty(STDERR_FILENO) != 0;
    set_whereabouts("monitor", "starting");
    if (msg_cq_create(msg_, &cq_) != MSG_OK || rio_init(msg_, nullptr, nullptr, &rio_) != RIO_OK) {
        std::fprintf(stderr, "sortapp: monitor: cannot start libremoteio\n");
        return 1;
    }
    // Nodes ask whether the monitor is still there.
    rio_set_handler(rio_, kCmdPing, answer_ping, nullptr);
    seen_.assign(static_cast<size_t>(n_), {});
    dead_.assign(static_cast<size_t>(n_), false);
    ping_period_s_ = std::min(tty_ && !o_.json ? 0.5 : 5.0, o_.stall_ms / 4000.0);
    const double t0 = now_seconds();
    const bool river = o_.params.algorithm == kRiver;
    for (const Step &step :
         river ? std::span<const Step>(kRiverSteps) : std::span<const Step>(kThreePhaseSteps)) {
        set_phase(step.phase);
        if (Status s = step.run(*this); !s) abort_job(s.message());
    }
    const double total = now_seconds() - t0;
    int code = 0;
    if (Status late = monitor_finish(*this); !late) {
        // Outputs are in place on the other nodes: the job's launcher must not trust them.
        std::fprintf(stderr, "sortapp: the sort failed at its very end: %s\n",
                     late.message().c_str());
        code = 1;
    } else {
        print_report(o_, n_, job, total);
    }
    int rc = rio_finalize(rio_);
    if (rc != RIO_OK) code = 1;
    rio_destroy(rio_);
    msg_cq_destroy(cq_);
    return code;
}

void Monitor::abort_job(const std::string &why) {
    set_phase("aborting");
    std::fprintf(stderr, "sortapp: the sort failed: %s\n", why.c_str());
    // Each live node's shadow thread hears it, whatever its sorting thread is doing.
    ask_all(
        kCmdAbort, RIO_TARGET_SHADOW,
        [&](int) { return std::vector<char>(why.begin(), why.end()); }, 64);
    std::fprintf(stderr, "sortapp: every node removed what it created; no output is left\n");
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(1);
}

int monitor_main(const JobOptions &opts, msg_context_t *msg, int nodes) {
    Monitor m(opts, msg, nodes);
    return m.run();
}

}  // namespace sortapp::cluster
