// How the monitor asks every node at once: one order (or question) to each, every answer
// awaited, while each node's shadow thread is asked whether it is still there; a node that
// dies or stops answering settles its order as failed. Also the progress it shows from those
// answers (the progress line, or --watch's live view: monitor/live_view.hpp), and the errors
// that name the node that failed a step.
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <memory>

#include "liveness.hpp"
#include "monitor/state.hpp"

namespace sortapp::cluster {

namespace {

// Status of an answer that never came: the node stopped answering (SIGSTOP, a frozen host).
constexpr int kStalled = -1000;
// Status of an order whose node answered the liveness question with what no node could mean.
constexpr int kMalformed = -1001;

}  // namespace

// One question in flight: an order (or question) to a node, or the liveness question asked
// of its shadow thread meanwhile (kCmdProgress, whose answer also feeds the progress line and
// brings the node's counter samples since the last).
struct Pending {
    unsigned round = 0;
    bool is_ping = false;
    int node = 0;
    bool outstanding = false;  // the transport still owes a completion
    bool settled = false;      // an order's outcome is known (answered, failed or stalled)
    int status = 0;
    double asked = 0;
    // Where the answer lands: left uninitialised, so a large capacity (phase 3a's samples) costs
    // only the pages the answer fills, not a zeroing of the whole per node and round.
    std::unique_ptr<char[]> buf;
    size_t capacity = 0, bytes = 0;
    uint64_t first = 0;  // the liveness question's payload: the first sample wanted
    int64_t sent_us = 0, received_us = 0;

    void make_room(size_t n) {
        if (capacity < n) buf.reset(new char[n]), capacity = n;
        bytes = 0;
    }
};

// A round's questions. If some are still unanswered when the round ends (a stopped node),
// the round is kept to the end of the process: a late answer must not land in freed memory.
struct Round {
    std::vector<Pending> orders, pings;
    std::vector<std::vector<char>> requests;
    bool unanswered() const {
        for (const auto *v : {&orders, &pings})
            for (const Pending &p : *v)
                if (p.outstanding) return true;
        return false;
    }
    void settle(size_t node, int status, int &outstanding) {
        orders[node].status = status;
        orders[node].settled = true;
        --outstanding;
    }
};

std::vector<Answer> Monitor::ask_all(uint32_t command, int target,
                                     const std::function<std::vector<char>(int)> &payload,
                                     size_t reply_capacity) {
    auto round = std::make_unique<Round>();
    Round &r = *round;
    ++round_;
    const int outstanding = send_orders(r, command, target, payload, reply_capacity);
    const bool show = shows(command);
    wait_for_orders(r, outstanding, show);
    // The progress line goes with its round; the live view stays until the steps end.
    if (show && !o_.watch) std::fputs("\r\033[K", stderr);
    std::vector<Answer> answers(static_cast<size_t>(n_));
    for (size_t i = 0; i < answers.size(); ++i) {
        Pending &o = r.orders[i];
        answers[i].status = o.status;
        if (o.settled && !o.outstanding)  // an answer or a message
            answers[i].data.assign(o.buf.get(), o.buf.get() + o.bytes);
        answers[i].sent_us = o.sent_us;
        answers[i].received_us = o.received_us;
        if (o.status == kStalled || o.status == MSG_ERR_PEER_FAILED) dead_[i] = true;
    }
    wait_for_pings(r);
    if (r.unanswered()) {
        static std::vector<std::unique_ptr<Round>> kept;  // see Round
        kept.push_back(std::move(round));
    }
    return answers;
}

// Issues the order to every node not known dead; returns how many are in flight.
int Monitor::send_orders(Round &r, uint32_t command, int target,
                         const std::function<std::vector<char>(int)> &payload,
                         size_t reply_capacity) {
    const auto n = static_cast<size_t>(n_);
    r.orders.resize(n);
    r.pings.resize(n);
    r.requests.resize(n);
    int outstanding = 0;
    const double t0 = now_seconds();
    heard_.resize(n, t0);
    for (size_t i = 0; i < n; ++i) {
        for (Pending *p : {&r.orders[i], &r.pings[i]}) {
            p->round = round_;
            p->node = static_cast<int>(i);
            p->asked = t0;  // for the liveness question, the order itself is the first
        }
        r.pings[i].is_ping = true;
        Pending &o = r.orders[i];
        if (dead_[i]) {
            o.status = MSG_ERR_PEER_FAILED;
            o.settled = true;
            continue;
        }
        r.requests[i] = payload ? payload(static_cast<int>(i)) : std::vector<char>{};
        o.make_room(reply_capacity);
        o.sent_us = realtime_us();
        int rc = rio_request(rio_, o.node, target, command, r.requests[i].data(),
                             r.requests[i].size(), o.buf.get(), o.capacity, cq_, &o);
        if (rc != RIO_OK) {
            o.status = rc;
            o.settled = true;
        } else {
            o.outstanding = true;
            ++outstanding;
        }
    }
    return outstanding;
}

// Until every order is settled: answers, liveness answers, and the stall timeout. At least
// every 0.1 s, whether answers keep coming or not: the liveness questions that are due, the
// stalls and the progress shown.
void Monitor::wait_for_orders(Round &r, int outstanding, bool show) {
    double ticked = 0;
    while (outstanding > 0) {
        msg_completion_t c;
        int rc = msg_cq_wait(cq_, 100, &c);
        const double t = now_seconds();
        if (rc == MSG_OK) {
            take_completion(r, c, t, outstanding);
            if (t - ticked < 0.1) continue;
        } else if (rc != MSG_ERR_TIMEOUT) {
            for (Pending &o : r.orders)
                if (!o.settled) o.status = rc, o.settled = true;
            return;
        }
        ticked = t;
        for (size_t i = 0; i < r.orders.size(); ++i) {
            if (!r.orders[i].settled)
                watch_node(r, i, t, outstanding);
            else if (show && o_.watch && r.orders[i].status == RIO_OK)
                ask_progress(r, i, t);  // done with its order: its view goes on moving
        }
        if (show) show_progress(t);
    }
}

void Monitor::take_completion(Round &r, const msg_completion_t &c, double now, int &outstanding) {
    auto *p = static_cast<Pending *>(c.cookie);
    if (p == nullptr || p->round != round_) return;  // a late answer to an old round
    p->outstanding = false;
    const auto k = static_cast<size_t>(p->node);
    r.pings[k].asked = now;  // heard from: the next question is due a period from now
    if (c.status != MSG_ERR_PEER_FAILED) heard_[k] = now;
    if (p->is_ping) {
        if (c.status == MSG_ERR_PEER_FAILED && !r.orders[k].settled)
            r.settle(k, c.status, outstanding);
        else if (c.status == RIO_OK)
            take_progress(r, k, c.bytes, realtime_us(), outstanding);
        return;
    }
    if (p->settled) return;
    p->received_us = realtime_us();
    p->bytes = std::min(c.bytes, p->capacity);
    r.settle(k, c.status, outstanding);
}

// Liveness questions to live nodes are answered soon; waits for them, bounded.
void Monitor::wait_for_pings(Round &r) {
    const double until = now_seconds() + o_.stall_ms / 1000.0;
    while (r.unanswered() && now_seconds() < until) {
        bool only_dead = true;
        for (size_t i = 0; i < r.orders.size(); ++i)
            if ((r.orders[i].outstanding || r.pings[i].outstanding) && !dead_[i]) only_dead = false;
        if (only_dead) break;
        msg_completion_t c;
        if (msg_cq_wait(cq_, 100, &c) == MSG_OK) {
            auto *p = static_cast<Pending *>(c.cookie);
            if (p == nullptr || p->round != round_) continue;
            p->outstanding = false;
            // Every order is settled: a liveness answer only brings progress and samples.
            int none = 0;
            if (p->is_ping && c.status == RIO_OK)
                take_progress(r, static_cast<size_t>(p->node), c.bytes, realtime_us(), none);
        }
    }
}

void Monitor::watch_node(Round &r, size_t i, double now, int &outstanding) {
    Pending &ping = r.pings[i];
    if (ping.outstanding) {
        if (now - ping.asked > o_.stall_ms / 1000.0) r.settle(i, kStalled, outstanding);
        return;
    }
    if (ask_progress(r, i, now) == MSG_ERR_PEER_FAILED)
        r.settle(i, MSG_ERR_PEER_FAILED, outstanding);
}

int Monitor::ask_progress(Round &r, size_t i, double now) {
    Pending &ping = r.pings[i];
    // Due a period after the node was last heard from (liveness) or, with --watch, after the
    // last question, whatever answers came between: a job of short rounds (phase 3a) would
    // otherwise never be asked.
    const bool due = now - ping.asked >= ping_period_s_ ||
                     (o_.watch && now - progress_asked_[i] >= ping_period_s_);
    if (ping.outstanding || !due) return RIO_OK;
    ping.make_room(kCountersAnswerBytes);
    ping.asked = progress_asked_[i] = now;
    ping.first = job.counters[i].next;
    ping.sent_us = realtime_us();
    int rc = rio_request(rio_, ping.node, RIO_TARGET_SHADOW, kCmdProgress, &ping.first,
                         sizeof ping.first, ping.buf.get(), ping.capacity, cq_, &ping);
    if (rc == RIO_OK) ping.outstanding = true;
    return rc;
}

void Monitor::take_progress(Round &r, size_t k, size_t bytes, int64_t now_us, int &outstanding) {
    const Pending &ping = r.pings[k];
    CountersAnswer a;
    std::string why = decode_counters(ping.buf.get(), std::min(bytes, ping.capacity), a);
    if (why.empty()) {
        Status s = job.counters[k].take(ping.first, a, ping.sent_us, now_us);
        if (!s) why = s.message();
    }
    if (why.empty()) {
        seen_[k] = a.progress;
    } else if (!r.orders[k].settled) {
        garbled_[k] = why;
        r.settle(k, kMalformed, outstanding);
    }
}

bool Monitor::shows(uint32_t command) const {
    if (o_.watch) return watching_ && command != kCmdAbort;
    return tty_ && !o_.json &&
           (command == kCmdLocal || command == kCmdMerge || command == kCmdRiverSort);
}

namespace {

// --watch on a terminal: a frame every 0.2 s, its rates over the last 0.5 s (a shorter span
// makes the bars flicker with each 10 ms tick of the CPU counters). Without a terminal, a
// plain line every 5 s, its rates over those 5 s.
constexpr double kFramePeriod = 0.2;
constexpr double kFrameWindow = 0.5;
constexpr double kPlainPeriod = 5;

}  // namespace

void Monitor::show_progress(double now) {
    if (!o_.watch) {
        if (now - last_draw_ >= 0.5) draw_progress();
    } else if (tty_) {
        if (now - last_draw_ < kFramePeriod) return;
        last_draw_ = now;
        double probe = 0;
        for (const NodeCheck &c : job.checks)
            probe = std::max({probe, c.disk_read_mb_s, c.disk_write_mb_s, c.disk_mixed_mb_s});
        view_.draw(node_views(kFrameWindow), now - started_, probe);
    } else if (now - last_plain_ >= kPlainPeriod) {
        last_plain_ = now;
        std::fprintf(stderr, "%s\n", plain_line(node_views(kPlainPeriod), now - started_).c_str());
    }
}

std::vector<NodeView> Monitor::node_views(double window_s) const {
    std::vector<NodeView> views;
    for (size_t k = 0; k < static_cast<size_t>(n_); ++k) {
        views.push_back(view_of(seen_[k], job.counters[k], window_s));
        // Before its first progress answer (the check asks for samples alone), the phase its
        // newest sample names.
        const NodeCounters &c = job.counters[k];
        if (views.back().phase.empty() && !c.samples.empty() &&
            c.samples.back().phase < c.phase_names.size())
            views.back().phase = c.phase_names[c.samples.back().phase];
    }
    return views;
}

// One line on the terminal: each node's phase, percent and MB/s. The rate is taken between
// two answers that moved the count (the line is drawn more often than nodes answer, so a rate
// between draws would read 0 most of the time), and shown as 0 once a node has not moved for
// two seconds.
void Monitor::draw_progress() {
    const double t = now_seconds();
    std::string line;
    const auto n = static_cast<size_t>(n_);
    last_done_.resize(n, 0);
    last_phase_.resize(n);
    last_change_.resize(n, t);
    shown_mb_s_.resize(n, 0);
    for (size_t k = 0; k < n; ++k) {
        const PhaseFigures &f = seen_[k];
        char part[96];
        if (last_phase_[k] != f.phase || f.bytes_read < last_done_[k]) {
            last_phase_[k] = f.phase;
            last_done_[k] = f.bytes_read;
            last_change_[k] = t;
            shown_mb_s_[k] = 0;
        } else if (f.bytes_read > last_done_[k]) {
            shown_mb_s_[k] =
                (f.bytes_read - last_done_[k]) / std::max(t - last_change_[k], 1e-3) / 1e6;
            last_done_[k] = f.bytes_read;
            last_change_[k] = t;
        } else if (t - last_change_[k] > 2) {
            shown_mb_s_[k] = 0;
        }
        if (f.bytes_written > 0)
            std::snprintf(part, sizeof part, "n%zu %s %3.0f%% %5.0f MB/s", k, f.phase.c_str(),
                          100.0 * f.bytes_read / f.bytes_written, shown_mb_s_[k]);
        else
            std::snprintf(part, sizeof part, "n%zu %s", k,
                          f.phase.empty() ? "starting" : f.phase.c_str());
        line += (k ? " | " : "") + std::string(part);
    }
    last_draw_ = t;
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
}

Status Monitor::failure(const std::vector<Answer> &answers, const char *step) const {
    // A node that died or stopped is the cause; its partners' errors are consequences.
    auto rank = [](int status) {
        return status == MSG_ERR_PEER_FAILED || status == kStalled || status == kMalformed ? 0 : 1;
    };
    size_t first = answers.size();
    for (size_t i = 0; i < answers.size(); ++i)
        if (answers[i].status != RIO_OK &&
            (first == answers.size() || rank(answers[i].status) < rank(answers[first].status)))
            first = i;
    if (first == answers.size()) return Status::ok();
    const Answer &a = answers[first];
    std::string why = a.status == kNodeError            ? std::string(a.data.begin(), a.data.end())
                      : a.status == MSG_ERR_PEER_FAILED ? peer_failed_cause(first)
                      : a.status == kStalled
                          ? "the sort process, its host or its link stopped answering for " +
                                std::to_string(o_.stall_ms / 1000) + " s"
                      : a.status == kMalformed ? "a malformed answer (" + garbled_[first] + ")"
                                               : rio_strerror(a.status);
    return Status::error("node " + std::to_string(first) + ", " + step + ": " + why);
}

std::string Monitor::peer_failed_cause(size_t node) const {
    const double silent = node < heard_.size() ? now_seconds() - heard_[node] : 0;
    // A process that exits closes its connections and is declared failed within about a ping
    // period of its last answer; a host that vanishes (or its link) only once libmsg has missed
    // its heartbeats for heartbeat_s_. The silence is taken for whichever it is nearer: the
    // ping period grows with the stall timeout, so a fixed bound would not do.
    const double split = std::max((ping_period_s_ + heartbeat_s_) / 2, ping_period_s_ + 1.5);
    if (silent <= split) return "the sort process exited or was killed";
    std::string host;
    if (node < job.checks.size())
        host = job.checks[node].disk.substr(0, job.checks[node].disk.rfind(':'));
    char text[200];
    std::snprintf(text, sizeof text,
                  "the host%s%s or its link stopped answering (no word for %.0f s before it was "
                  "declared failed)",
                  host.empty() ? "" : " ", host.c_str(), silent);
    return text;
}

Status malformed(size_t node, const char *step, const std::string &cause) {
    return Status::error("node " + std::to_string(node) + ", " + step + ": a malformed answer (" +
                         cause + ")");
}

void Monitor::progress(const char *fmt, ...) {
    if (!tty_ || o_.json) return;
    view_.erase();  // the line goes where the frame was; the next frame follows it
    va_list ap;
    va_start(ap, fmt);
    std::fputs("sortapp: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
}

}  // namespace sortapp::cluster
