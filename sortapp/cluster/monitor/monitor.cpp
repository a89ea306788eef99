// The monitor: runs the job's steps in order — check, phases 1 and 2, phase 3a, phase 3b,
// commit (phases/*.cpp); with the river algorithm check, sampling, river sort, commit — then
// collects the rest of every node's counter samples, says the final word, prints the report
// and writes the timeline (--timeline). A step that fails aborts the job: every node removes
// what it created, and no output is left; the timeline shows what had arrived.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <span>

#include "liveness.hpp"
#include "monitor/state.hpp"
#include "node.hpp"
#include "paths.hpp"
#include "phases/phases.hpp"

namespace sortapp::cluster {

namespace {

// The steps of a job, in order, each under the phase name a node or test sees.
struct Step {
    const char *phase;
    Status (*run)(Monitor &);
};
constexpr Step kThreePhaseSteps[] = {
    {"checking", monitor_check},  {"phases 1 and 2", monitor_local},
    {"phase 3a", monitor_select}, {"phase 3b", monitor_merge},
    {"commit", monitor_commit},   {"collecting counters", monitor_collect},
};
constexpr Step kRiverSteps[] = {
    {"checking", monitor_check},
    {"sampling", monitor_sample},
    {"river sort", monitor_river},
    {"commit", monitor_commit},
    {"collecting counters", monitor_collect},
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
    garbled_.assign(static_cast<size_t>(n_), {});
    progress_asked_.assign(static_cast<size_t>(n_), 0);
    job.counters.assign(static_cast<size_t>(n_), {});
    // Asked more often while a person watches: --watch's frames on a terminal, its plain
    // lines without one, the progress line on a terminal.
    const double period = o_.watch ? (tty_ ? 0.2 : 1.0) : tty_ && !o_.json ? 0.5 : 5.0;
    ping_period_s_ = std::min(period, o_.stall_ms / 4000.0);
    if (msg_info_t info{}; msg_get_info(msg_, &info) == MSG_OK && info.heartbeat_ms > 0)
        heartbeat_s_ = info.heartbeat_ms / 1000.0;
    // The timeline is written where the monitor runs: a directory it could not write in fails
    // the job before any work.
    if (Status s = check_timeline_dir(o_, n_); !s) {
        timeline_refused_ = true;
        abort_job(s.message());
    }
    const double t0 = now_seconds();
    started_ = last_plain_ = t0;
    watching_ = true;
    const bool river = o_.params.algorithm == kRiver;
    for (const Step &step :
         river ? std::span<const Step>(kRiverSteps) : std::span<const Step>(kThreePhaseSteps)) {
        set_phase(step.phase);
        if (Status s = step.run(*this); !s) abort_job(s.message());
        if (step.run == monitor_check) job.checked_us = realtime_us();
        if (step.run == monitor_commit) job.committed_us = realtime_us();
    }
    const double total = now_seconds() - t0;
    watching_ = false;
    view_.erase();
    int code = 0;
    if (Status late = monitor_finish(*this); !late) {
        // Outputs are in place on the other nodes: the job's launcher must not trust them.
        std::fprintf(stderr, "sortapp: the sort failed at its very end: %s\n",
                     late.message().c_str());
        code = 1;
        write_failed_timeline("the sort failed at its very end: " + late.message());
    } else {
        const ReportText report = print_report(o_, n_, job, total);
        if (!o_.timeline.empty()) {
            std::fflush(stdout);
            Status s = write_timeline(o_, job, "", report.text, report.needles);
            if (!s) {
                // The sort succeeded and every output is in place: a status of its own says so.
                std::fprintf(stderr, "sortapp: %s; the sorted outputs are in place\n",
                             s.message().c_str());
                code = kExitTimelineFailed;
            }
        }
    }
    int rc = rio_finalize(rio_);
    if (rc != RIO_OK) code = 1;
    rio_destroy(rio_);
    msg_cq_destroy(cq_);
    return code;
}

void Monitor::abort_job(const std::string &why) {
    set_phase("aborting");
    watching_ = false;
    view_.erase();
    std::fprintf(stderr, "sortapp: the sort failed: %s\n", why.c_str());
    // Each live node's shadow thread hears it, whatever its sorting thread is doing.
    ask_all(
        kCmdAbort, RIO_TARGET_SHADOW,
        [&](int) { return std::vector<char>(why.begin(), why.end()); }, 64);
    std::fprintf(stderr, "sortapp: every node removed what it created; no output is left\n");
    write_failed_timeline("the sort failed: " + why);
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(1);
}

void Monitor::write_failed_timeline(const std::string &why) {
    if (o_.timeline.empty() || timeline_refused_) return;
    Status s = write_timeline(o_, job, "failed", "sortapp: " + why + "\n", {});
    if (s)
        std::fprintf(stderr, "sortapp: the timeline of what arrived is in %s\n",
                     o_.timeline.c_str());
    else
        std::fprintf(stderr, "sortapp: %s\n", s.message().c_str());
}

int monitor_main(const JobOptions &opts, msg_context_t *msg, int nodes) {
    Monitor m(opts, msg, nodes);
    return m.run();
}

}  // namespace sortapp::cluster
