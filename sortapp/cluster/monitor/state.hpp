// The monitor's state, shared by its steps (phases/*.cpp): the way to ask every node at once
// (monitor/ask.cpp) and what the job has learnt so far, for the next steps and the report.
#pragma once

#include <msg/msg.h>
#include <rio/rio.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "messages.hpp"
#include "monitor/counters.hpp"
#include "monitor/live_view.hpp"
#include "options.hpp"
#include "sortapp/needle.hpp"
#include "sortapp/status.hpp"
#include "viaduct/clock.hpp"

namespace sortapp::cluster {

using viaduct::now_seconds;

// A node's answer: RIO_OK and the reply, kNodeError and its message, or why none came.
struct Answer {
    int status = 0;
    std::vector<char> data;
    int64_t sent_us = 0, received_us = 0;  // the monitor's realtime_us (0: no answer)
};

// What the steps learn, in order.
struct JobFigures {
    std::vector<NodeCheck> checks;
    std::vector<LocalDone> local;
    std::vector<PhaseFigures> merge, served;
    double local_s = 0, select_s = 0, merge_s = 0, network_mb_s = 0;
    unsigned rounds = 0;
    std::vector<uint64_t> partition_records;
    std::vector<std::vector<uint64_t>> starts;  // phase 3a's answer: [partition][node]
    // The river algorithm's: the splitters, each node's answer, and the steps' times.
    std::vector<Element> splitters;
    uint64_t samples = 0;
    std::vector<RiverDone> river;
    double sample_s = 0, river_s = 0;
    // Every node's counter samples as far as they have come (monitor/counters.hpp).
    std::vector<NodeCounters> counters;
    // When the check ended (the first work order follows at once) and the commit did,
    // CLOCK_REALTIME microseconds.
    int64_t checked_us = 0, committed_us = 0;
};

// For each node, how many nodes of the job share its scratch disk (and so its bandwidth).
std::vector<uint32_t> nodes_sharing_disk(const std::vector<NodeCheck> &checks);

struct Round;

class Monitor {
  public:
    Monitor(const JobOptions &o, msg_context_t *msg, int nodes) : o_(o), msg_(msg), n_(nodes) {}

    int run();

    const JobOptions &opts() const { return o_; }
    int nodes() const { return n_; }
    // Sends command (with payload(i), or nothing) to every node's target thread and waits
    // for every answer, asking each node's shadow thread meanwhile whether it is still there.
    std::vector<Answer> ask_all(uint32_t command, int target,
                                const std::function<std::vector<char>(int)> &payload,
                                size_t reply_capacity);
    // The first failed answer (a node that died or stopped before any other cause) as an
    // error naming the node and the step; ok when every node answered RIO_OK.
    Status failure(const std::vector<Answer> &answers, const char *step) const;
    // A line on the terminal (not with --json).
    void progress(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

    JobFigures job;

  private:
    // The job failed: every node removes what it created and exits; so does the monitor.
    [[noreturn]] void abort_job(const std::string &why);
    int send_orders(Round &r, uint32_t command, int target,
                    const std::function<std::vector<char>(int)> &payload, size_t reply_capacity);
    void wait_for_orders(Round &r, int outstanding, bool show);
    // One completion of a round: an answer settles its order, a liveness answer brings the
    // node's progress and samples.
    void take_completion(Round &r, const msg_completion_t &c, double now, int &outstanding);
    void wait_for_pings(Round &r);
    // Whether a round of `command` shows the job's progress: with --watch, every round while
    // the steps run; else the progress line on a terminal while the nodes sort.
    bool shows(uint32_t command) const;
    // The progress line, the live view's frame or its plain line, whichever is due.
    void show_progress(double now);
    // Every node's figures for the live view, its rates over `window_s`.
    std::vector<NodeView> node_views(double window_s) const;
    // Sends the liveness question to `node` if it is due; declares the order stalled if the
    // last one went unanswered for the stall timeout.
    void watch_node(Round &r, size_t node, double now, int &outstanding);
    // Sends the liveness question to `node` if it is due and none is in flight; the transport's
    // status (RIO_OK when nothing was due).
    int ask_progress(Round &r, size_t node, double now);
    void draw_progress();
    // Why node i failed, as far as the monitor can tell: a process that exits is declared
    // failed at once; a host or link that goes away only after a silence.
    std::string peer_failed_cause(size_t node) const;
    // A node's answer to the liveness question: its progress and samples taken, or its order
    // settled as failed, naming what is wrong with the answer.
    void take_progress(Round &r, size_t node, size_t bytes, int64_t now_us, int &outstanding);
    // --timeline after a job that failed: what arrived, with why it failed; one line says so.
    void write_failed_timeline(const std::string &why);

    const JobOptions &o_;
    msg_context_t *msg_;
    int n_;
    rio_t *rio_ = nullptr;
    msg_cq_t *cq_ = nullptr;
    bool tty_ = false;
    double ping_period_s_ = 1;
    // The silence after which libmsg declares a peer's host gone (msg_info_t.heartbeat_ms).
    double heartbeat_s_ = 10;
    unsigned round_ = 0;
    std::vector<PhaseFigures> seen_;  // each node's last progress answer
    std::vector<bool> dead_;          // nodes known to have exited or stopped
    std::vector<double> heard_;       // when each node last answered anything
    // Why each node's answer to the liveness question was refused (status kMalformed).
    std::vector<std::string> garbled_;
    bool timeline_refused_ = false;  // --timeline's directory failed its check: none is written
    double last_draw_ = 0;
    // --watch: the frame on the terminal, whether the steps are running (the view is shown
    // only then), when they began and when the last plain line (no terminal) was printed.
    LiveView view_;
    bool watching_ = false;
    double started_ = 0, last_plain_ = 0;
    std::vector<double> progress_asked_;  // when each node was last asked kCmdProgress
    std::vector<uint64_t> last_done_;
    std::vector<std::string> last_phase_;
    std::vector<double> last_change_, shown_mb_s_;  // per node: when its count last moved, and
                                                    // the rate it moved at since the one before
};

// "node N, STEP: a malformed answer (CAUSE)".
Status malformed(size_t node, const char *step, const std::string &cause);

// Every node's answer to `step` decoded into replies[i] and accepted by check(i, replies[i])
// (a Status); else the first failure as an error naming the node, the step and the cause.
template <typename Reply, typename Check>
Status decode_answers(const Monitor &m, const std::vector<Answer> &answers, const char *step,
                      std::vector<Reply> &replies, Check check) {
    SORTAPP_TRY(m.failure(answers, step));
    replies.assign(answers.size(), Reply{});
    for (size_t i = 0; i < answers.size(); ++i) {
        if (!decode(answers[i].data.data(), answers[i].data.size(), replies[i]))
            return malformed(i, step, "not one encoding of the reply");
        if (Status s = check(static_cast<uint32_t>(i), replies[i]); !s)
            return malformed(i, step, s.message());
    }
    return Status::ok();
}

template <typename Reply>
Status decode_answers(const Monitor &m, const std::vector<Answer> &answers, const char *step,
                      std::vector<Reply> &replies) {
    return decode_answers(m, answers, step, replies,
                          [](uint32_t, const Reply &) { return Status::ok(); });
}

// The report: per node and phase, against the expectations, with the needles (the nodes
// slower than the median of a phase, and the counter that shows why: monitor/report.cpp).
// Printed as text or JSON; returned as text, with the needles' lines, for the timeline.
struct ReportText {
    std::string text;
    std::vector<std::string> needles;
};
ReportText print_report(const JobOptions &o, int nodes, JobFigures &job, double total_s);

// The needle finder over the job's phases (`per`: each node's, as the report shows them) and
// the samples inside each (monitor/needles.cpp).
std::vector<Needle> job_needles(const JobOptions &o, const JobFigures &job,
                                const std::vector<std::vector<PhaseFigures>> &per);

// --timeline: the job's timeline from every node's samples, titled with the job, beside the
// report and the needles (monitor/timeline.cpp). An error naming the cause if it cannot.
Status write_timeline(const JobOptions &o, const JobFigures &job, const std::string &outcome,
                      const std::string &report, const std::vector<std::string> &needles);

}  // namespace sortapp::cluster
