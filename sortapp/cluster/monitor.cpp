// The monitor: sends the parameters, has every node check its input, runs
// phases 1 and 2 everywhere at once, drives phase 3a's selection rounds,
// orders phase 3b, and prints the report — per node and phase, against the
// expectation from measured disk and network bandwidth, with stragglers named.
#include <rio/rio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "liveness.hpp"
#include "messages.hpp"
#include "node.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/report.hpp"

namespace sortapp::cluster {

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct Answer {
    int status = 0;
    std::vector<char> data;
};

// Status of an answer that never came: the node stopped answering (SIGSTOP, a frozen host).
constexpr int kStalled = -1000;

// One question in flight: an order (or question) to a node, or the liveness question asked
// of its shadow thread meanwhile (kCmdProgress, whose answer also feeds the progress line).
struct Pending {
    unsigned round = 0;
    bool is_ping = false;
    int node = 0;
    bool outstanding = false;  // the transport still owes a completion
    bool settled = false;      // an order's outcome is known (answered, failed or stalled)
    int status = 0;
    double asked = 0;
    std::vector<char> data;
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
};

class Monitor {
  public:
    Monitor(const JobOptions &o, msg_context_t *msg, int nodes) : o_(o), msg_(msg), n_(nodes) {}

    int run();

  private:
    // Sends command (with payload[i]) to every node, waits for all answers.
    std::vector<Answer> ask_all(uint32_t command, int target,
                                const std::function<std::vector<char>(int)> &payload,
                                size_t reply_capacity);
    // The first failed answer as "node i: message", or empty.
    std::string failure(const std::vector<Answer> &answers, const char *step);
    // Sends the liveness question to `node` if it is due; declares the order stalled if the
    // last one went unanswered for the stall timeout.
    void watch_node(Round &r, size_t node, double now, int &outstanding);
    // The job failed: every node removes what it created and exits; so does the monitor.
    [[noreturn]] void abort_job(const std::string &why);
    // The final word (keep your output); a node that did not hear it, as text.
    std::string finish();
    std::string check();
    std::string local();
    std::string select();
    std::string merge();
    std::string commit();
    void report(double total_s);
    void progress(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void draw_progress();
    double last_draw_ = 0;
    std::vector<uint64_t> last_done_;
    std::vector<std::string> last_phase_;
    std::vector<PhaseFigures> seen_;  // each node's last progress answer
    std::vector<bool> dead_;          // nodes known to have exited or stopped
    unsigned round_ = 0;
    double ping_period_s_ = 1;

    const JobOptions &o_;
    msg_context_t *msg_;
    int n_;
    rio_t *rio_ = nullptr;
    msg_cq_t *cq_ = nullptr;
    bool tty_ = false;

    std::vector<NodeCheck> checks_;
    std::vector<LocalDone> local_;
    std::vector<PhaseFigures> merge_, served_;
    double local_s_ = 0, select_s_ = 0, merge_s_ = 0, network_mb_s_ = 0;
    unsigned rounds_ = 0;
    std::vector<uint64_t> partition_records_;
    std::vector<std::vector<uint64_t>> starts_;  // phase 3a's answer: [partition][node]
};

std::vector<Answer> Monitor::ask_all(uint32_t command, int target,
                                     const std::function<std::vector<char>(int)> &payload,
                                     size_t reply_capacity) {
    const auto n = static_cast<size_t>(n_);
    auto round = std::make_unique<Round>();
    Round &r = *round;
    r.orders.resize(n);
    r.pings.resize(n);
    r.requests.resize(n);
    ++round_;
    int outstanding = 0;
    const double t0 = now_s();
    for (size_t i = 0; i < n; ++i) {
        Pending &o = r.orders[i];
        o.round = round_;
        o.node = static_cast<int>(i);
        o.asked = t0;
        r.pings[i] = o;
        r.pings[i].is_ping = true;
        r.pings[i].asked = t0;  // the order itself is the first question
        if (dead_[i]) {
            o.status = MSG_ERR_PEER_FAILED;
            o.settled = true;
            continue;
        }
        r.requests[i] = payload ? payload(static_cast<int>(i)) : std::vector<char>{};
        o.data.resize(reply_capacity);
        int rc = rio_request(rio_, o.node, target, command, r.requests[i].data(),
                             r.requests[i].size(), o.data.data(), o.data.size(), cq_, &o);
        if (rc != RIO_OK) {
            o.status = rc;
            o.settled = true;
        } else {
            o.outstanding = true;
            ++outstanding;
        }
    }
    const bool show = tty_ && !o_.json && (command == kCmdLocal || command == kCmdMerge);
    while (outstanding > 0) {
        msg_completion_t c;
        int rc = msg_cq_wait(cq_, 100, &c);
        const double t = now_s();
        if (rc == MSG_OK) {
            auto *p = static_cast<Pending *>(c.cookie);
            if (p == nullptr || p->round != round_) continue;  // a late answer to an old round
            p->outstanding = false;
            const auto k = static_cast<size_t>(p->node);
            r.pings[k].asked = t;  // heard from: the next question is due a period from now
            if (p->is_ping) {
                if (c.status == MSG_ERR_PEER_FAILED && !r.orders[k].settled) {
                    r.orders[k].status = c.status;
                    r.orders[k].settled = true;
                    --outstanding;
                } else if (c.status == RIO_OK) {
                    decode(p->data.data(), c.bytes, seen_[k]);
                }
                continue;
            }
            if (p->settled) continue;
            p->settled = true;
            p->status = c.status;
            p->data.resize(c.bytes);
            --outstanding;
            continue;
        }
        if (rc != MSG_ERR_TIMEOUT) {
            for (Pending &o : r.orders)
                if (!o.settled) o.status = rc, o.settled = true;
            break;
        }
        for (size_t i = 0; i < n; ++i)
            if (!r.orders[i].settled) watch_node(r, i, t, outstanding);
        if (show && t - last_draw_ >= 0.5) draw_progress();
    }
    if (show) std::fputs("\r\033[K", stderr);
    std::vector<Answer> answers(n);
    for (size_t i = 0; i < n; ++i) {
        Pending &o = r.orders[i];
        answers[i].status = o.status;
        if (o.settled && !o.outstanding) answers[i].data = o.data;  // an answer or a message
        if (o.status == kStalled || o.status == MSG_ERR_PEER_FAILED) dead_[i] = true;
    }
    // Liveness questions to live nodes are answered soon; wait for them, bounded.
    const double until = now_s() + o_.stall_ms / 1000.0;
    while (r.unanswered() && now_s() < until) {
        bool only_dead = true;
        for (size_t i = 0; i < n; ++i)
            if ((r.orders[i].outstanding || r.pings[i].outstanding) && !dead_[i]) only_dead = false;
        if (only_dead) break;
        msg_completion_t c;
        if (msg_cq_wait(cq_, 100, &c) == MSG_OK) {
            auto *p = static_cast<Pending *>(c.cookie);
            if (p != nullptr && p->round == round_) p->outstanding = false;
        }
    }
    if (r.unanswered()) {
        static std::vector<std::unique_ptr<Round>> kept;  // see Round
        kept.push_back(std::move(round));
    }
    return answers;
}

void Monitor::watch_node(Round &r, size_t i, double now, int &outstanding) {
    Pending &ping = r.pings[i];
    if (ping.outstanding) {
        if (now - ping.asked > o_.stall_ms / 1000.0) {
            r.orders[i].status = kStalled;
            r.orders[i].settled = true;
            --outstanding;
        }
        return;
    }
    if (now - ping.asked < ping_period_s_) return;
    ping.data.resize(4096);
    ping.asked = now;
    int rc = rio_request(rio_, ping.node, RIO_TARGET_SHADOW, kCmdProgress, nullptr, 0,
                         ping.data.data(), ping.data.size(), cq_, &ping);
    if (rc == RIO_OK) {
        ping.outstanding = true;
    } else if (rc == MSG_ERR_PEER_FAILED) {
        r.orders[i].status = rc;
        r.orders[i].settled = true;
        --outstanding;
    }
}

// One line on the terminal: each node's phase, percent and MB/s since the last look.
void Monitor::draw_progress() {
    const double t = now_s();
    std::string line;
    last_done_.resize(static_cast<size_t>(n_), 0);
    last_phase_.resize(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i) {
        const auto k = static_cast<size_t>(i);
        const PhaseFigures &f = seen_[k];
        char part[96];
        if (f.bytes_written > 0) {
            const bool same =
                last_draw_ > 0 && last_phase_[k] == f.phase && f.bytes_read >= last_done_[k];
            double mbps = same ? (f.bytes_read - last_done_[k]) / (t - last_draw_) / 1e6 : 0;
            last_done_[k] = f.bytes_read;
            last_phase_[k] = f.phase;
            std::snprintf(part, sizeof part, "n%d %s %3.0f%% %5.0f MB/s", i, f.phase.c_str(),
                          100.0 * f.bytes_read / f.bytes_written, mbps);
        } else {
            std::snprintf(part, sizeof part, "n%d %s", i, f.phase.empty() ? "?" : f.phase.c_str());
        }
        line += (i ? " | " : "") + std::string(part);
    }
    last_draw_ = t;
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
}

std::string Monitor::failure(const std::vector<Answer> &answers, const char *step) {
    // A node that died or stopped is the cause; its partners' errors are consequences.
    auto rank = [](int status) {
        return status == MSG_ERR_PEER_FAILED || status == kStalled ? 0 : 1;
    };
    size_t first = answers.size();
    for (size_t i = 0; i < answers.size(); ++i)
        if (answers[i].status != RIO_OK &&
            (first == answers.size() || rank(answers[i].status) < rank(answers[first].status)))
            first = i;
    if (first == answers.size()) return {};
    const Answer &a = answers[first];
    std::string why = a.status == kNodeError            ? std::string(a.data.begin(), a.data.end())
                      : a.status == MSG_ERR_PEER_FAILED ? "the sort process exited or was killed"
                      : a.status == kStalled ? "the sort process stopped answering for " +
                                                   std::to_string(o_.stall_ms / 1000) + " s"
                                             : rio_strerror(a.status);
    return "node " + std::to_string(first) + ", " + step + ": " + why;
}

void Monitor::progress(const char *fmt, ...) {
    if (!tty_ || o_.json) return;
    va_list ap;
    va_start(ap, fmt);
    std::fputs("sortapp: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
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

std::string Monitor::finish() {
    // Every node has renamed its output: a signal now waits (bounded) until every node has
    // heard that the job succeeded, so the outputs are kept or lost together.
    struct Saying {
        std::mutex mu;
        std::condition_variable cv;
        bool said = false;
    };
    auto saying = std::make_shared<Saying>();
    cleanup::set_interrupt_hook([saying, stall = 2 * o_.stall_ms] {
        std::unique_lock<std::mutex> lk(saying->mu);
        saying->cv.wait_for(lk, std::chrono::milliseconds(stall), [&] { return saying->said; });
    });
    struct Said {
        std::shared_ptr<Saying> s;
        ~Said() {
            {
                std::lock_guard<std::mutex> lk(s->mu);
                s->said = true;
            }
            s->cv.notify_all();
            cleanup::set_interrupt_hook({});
        }
    } said{saying};
    uint32_t flag = 0;
    auto answers = ask_all(
        kCmdDone, RIO_TARGET_WORKER,
        [&](int) {
            return std::vector<char>(reinterpret_cast<char *>(&flag),
                                     reinterpret_cast<char *>(&flag) + sizeof flag);
        },
        4096);
    served_.assign(static_cast<size_t>(n_), {});
    for (size_t i = 0; i < answers.size(); ++i)
        if (answers[i].status == RIO_OK)
            decode(answers[i].data.data(), answers[i].data.size(), served_[i]);
    return failure(answers, "finishing");
}

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
    const double t0 = now_s();
    std::string why = check();
    if (why.empty()) why = local();
    if (why.empty()) why = select();
    if (why.empty()) why = merge();
    if (why.empty()) why = commit();
    if (!why.empty()) abort_job(why);
    const double total = now_s() - t0;
    int code = 0;
    if (std::string late = finish(); !late.empty()) {
        // Outputs are in place on the other nodes: the job's launcher must not trust them.
        std::fprintf(stderr, "sortapp: the sort failed at its very end: %s\n", late.c_str());
        code = 1;
    } else {
        report(total);
    }
    int rc = rio_finalize(rio_);
    if (rc != RIO_OK) code = 1;
    rio_destroy(rio_);
    msg_cq_destroy(cq_);
    return code;
}

// Every node checks its input and output before anyone does any work.
std::string Monitor::check() {
    set_phase("checking");
    auto answers = ask_all(
        kCmdCheck, RIO_TARGET_WORKER, [&](int) { return encode(o_.params); }, 4096);
    std::string why = failure(answers, "checking");
    for (size_t i = 0; why.empty() && i < answers.size(); ++i) {
        NodeCheck c;
        if (!decode(answers[i].data.data(), answers[i].data.size(), c))
            return "node " + std::to_string(i) + ", checking: a malformed answer";
        checks_.push_back(c);
    }
    return why;
}

// Phases 1 and 2 on every node at once.
std::string Monitor::local() {
    set_phase("phases 1 and 2");
    progress("%d nodes ready; phases 1 and 2 (local sort) on every node", n_);
    std::map<std::string, uint32_t> per_disk;
    for (const NodeCheck &c : checks_) ++per_disk[c.disk];
    double t = now_s();
    auto answers = ask_all(
        kCmdLocal, RIO_TARGET_WORKER,
        [&](int i) {
            uint32_t sharing = per_disk[checks_[static_cast<size_t>(i)].disk];
            const char *p = reinterpret_cast<const char *>(&sharing);
            return std::vector<char>(p, p + sizeof sharing);
        },
        1 << 16);
    local_s_ = now_s() - t;
    std::string why = failure(answers, "phases 1 and 2");
    for (size_t i = 0; why.empty() && i < answers.size(); ++i) {
        LocalDone d;
        if (!decode(answers[i].data.data(), answers[i].data.size(), d))
            return "node " + std::to_string(i) + ", phases 1 and 2: a malformed answer";
        local_.push_back(d);
    }
    return why;
}

// Phase 3a: exact splitting, in rounds of sampling and counting.
std::string Monitor::select() {
    set_phase("phase 3a");
    double t = now_s();
    std::vector<uint64_t> sizes;
    for (const LocalDone &d : local_) sizes.push_back(d.records);
    Selector sel(sizes, static_cast<uint32_t>(n_));
    std::string why;
    // A reply that does not decode, or does not fit the round, fails the job naming the node.
    auto take = [&](const std::vector<Answer> &answers, const char *step, auto reply, auto check,
                    auto use) {
        why = failure(answers, step);
        for (size_t i = 0; why.empty() && i < answers.size(); ++i) {
            const auto node = static_cast<uint32_t>(i);
            Status s = decode(answers[i].data.data(), answers[i].data.size(), reply)
                           ? check(node, reply)
                           : Status::error("not one encoding of the reply");
            if (s)
                use(node, reply);
            else
                why = "node " + std::to_string(i) + ", " + step + ": a malformed answer (" +
                      s.message() + ")";
        }
    };
    while (why.empty() && !sel.done()) {
        auto answers = ask_all(
            kCmdSamples, RIO_TARGET_SHADOW,
            [&](int i) { return encode(sel.sample_request(static_cast<uint32_t>(i))); }, 32u << 20);
        take(
            answers, "phase 3a sampling", SampleReply{},
            [&](uint32_t i, const SampleReply &r) { return sel.check_samples(i, r); },
            [&](uint32_t i, const SampleReply &r) { sel.take_samples(i, r); });
        if (!why.empty()) break;
        sel.choose_pivots();
        if (sel.done()) break;
        answers = ask_all(
            kCmdCounts, RIO_TARGET_SHADOW,
            [&](int i) { return encode(sel.count_request(static_cast<uint32_t>(i))); }, 1u << 20);
        take(
            answers, "phase 3a counting", CountReply{},
            [&](uint32_t i, const CountReply &r) { return sel.check_counts(i, r); },
            [&](uint32_t i, const CountReply &r) { sel.take_counts(i, r); });
    }
    select_s_ = now_s() - t;
    rounds_ = sel.rounds();
    if (!why.empty()) return why;
    starts_ = sel.starts();
    for (int j = 0; j < n_; ++j) {
        uint64_t c = 0;
        for (int i = 0; i < n_; ++i) c += starts_[j + 1][i] - starts_[j][i];
        partition_records_.push_back(c);
    }
    progress("phase 3a: %u rounds, %.3f s", rounds_, select_s_);
    return {};
}

// Phase 3b: the network figure for the expectations, then every node pulls its partition
// from everyone.
std::string Monitor::merge() {
    set_phase("phase 3b");
    if (o_.network_mb_s > 0) {
        network_mb_s_ = o_.network_mb_s;
    } else if (n_ > 1) {
        auto answers = ask_all(kCmdNetProbe, RIO_TARGET_WORKER, nullptr, 4096);
        std::string why = failure(answers, "network probe");
        if (!why.empty()) return why;
        std::vector<double> rates;
        for (auto &a : answers) {
            PhaseFigures f;
            if (decode(a.data.data(), a.data.size(), f) && f.seconds > 0)
                rates.push_back(f.bytes_received / f.seconds / 1e6);
        }
        if (!rates.empty()) {
            std::sort(rates.begin(), rates.end());
            network_mb_s_ = rates[rates.size() / 2];
        }
    }
    double t = now_s();
    auto answers = ask_all(
        kCmdMerge, RIO_TARGET_WORKER,
        [&](int j) {
            MergeOrder m;
            m.network_mb_s = network_mb_s_;
            for (int i = 0; i < n_; ++i) {
                m.handles.push_back(local_[static_cast<size_t>(i)].handle);
                m.first.push_back(starts_[j][i]);
                m.last.push_back(starts_[j + 1][i]);
            }
            return encode(m);
        },
        4096);
    merge_s_ = now_s() - t;
    std::string why = failure(answers, "phase 3b");
    for (size_t i = 0; why.empty() && i < answers.size(); ++i) {
        PhaseFigures f;
        if (!decode(answers[i].data.data(), answers[i].data.size(), f))
            return "node " + std::to_string(i) + ", phase 3b: a malformed answer";
        merge_.push_back(f);
    }
    return why;
}

// Every output is complete under a temporary name: each node renames its own into place.
std::string Monitor::commit() {
    set_phase("commit");
    return failure(ask_all(kCmdCommit, RIO_TARGET_WORKER, nullptr, 4096), "commit");
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void Monitor::report(double total_s) {
    uint64_t records = 0;
    for (const LocalDone &d : local_) records += d.records;
    // Expectations for phase 3b from the measured disk and network bandwidth.
    // A disk shared by several nodes gives each its share.
    std::map<std::string, uint32_t> per_disk;
    for (const NodeCheck &c : checks_) ++per_disk[c.disk];
    std::vector<double> dw, dr;
    for (const NodeCheck &c : checks_) {
        dw.push_back(c.disk_write_mb_s / per_disk[c.disk]);
        dr.push_back(c.disk_read_mb_s / per_disk[c.disk]);
    }
    const double disk_write = median(dw), disk_read = median(dr);
    for (size_t i = 0; i < merge_.size(); ++i) {
        PhaseFigures &f = merge_[i];
        f.bytes_sent = i < served_.size() ? served_[i].bytes_sent : 0;
        // The slowest of: receiving over the network, writing the output, and reading the
        // work file for everyone who pulls from this node (itself included).
        double net = network_mb_s_ > 0 ? f.bytes_received / (network_mb_s_ * 1e6) : 0;
        double wr = disk_write > 0 ? f.bytes_written / (disk_write * 1e6) : 0;
        double rd = disk_read > 0 ? f.bytes_sent / (disk_read * 1e6) : 0;
        f.expected_seconds = std::max({net, wr, rd});
        f.resource = f.expected_seconds == net ? "network" : "disk";
    }
    // All phases per node, in order.
    std::vector<std::vector<PhaseFigures>> per(local_.size());
    for (size_t i = 0; i < local_.size(); ++i) {
        per[i] = local_[i].phases;
        if (i < merge_.size()) per[i].push_back(merge_[i]);
    }
    // Stragglers: slower than the median of the same phase by the threshold.
    std::map<std::string, std::vector<double>> times;
    for (const auto &v : per)
        for (const PhaseFigures &f : v) times[f.phase].push_back(f.seconds);
    struct Straggler {
        size_t node;
        std::string phase, resource;
        double factor;
    };
    std::vector<Straggler> slow;
    for (size_t i = 0; i < per.size(); ++i)
        for (const PhaseFigures &f : per[i]) {
            double m = median(times[f.phase]);
            // Below 50 ms a phase is noise, not a straggler.
            if (m > 0 && f.seconds > 0.05 && f.seconds > o_.straggler * m) {
                std::string res = f.cpu_seconds > 0.9 * f.seconds ? "cpu" : f.resource;
                slow.push_back({i, f.phase, res, f.seconds / m});
            }
        }
    auto mbps = [](const PhaseFigures &f) {
        uint64_t b = std::max({f.bytes_read + f.bytes_received, f.bytes_written});
        return f.seconds > 0 ? b / f.seconds / 1e6 : 0.0;
    };
    if (o_.json) {
        std::printf(
            "{\"nodes\": %d, \"records\": %llu, \"record_size\": %llu, \"seconds\": %.3f, "
            "\"phases_1_2_seconds\": %.3f, \"phase_3a\": {\"rounds\": %u, \"seconds\": %.4f}, "
            "\"phase_3b_seconds\": %.3f, \"network_mb_s\": %.1f, \"partition_records\": [",
            n_, static_cast<unsigned long long>(records),
            static_cast<unsigned long long>(o_.params.record_size), total_s, local_s_, rounds_,
            select_s_, merge_s_, network_mb_s_);
        for (size_t j = 0; j < partition_records_.size(); ++j)
            std::printf("%s%llu", j ? ", " : "",
                        static_cast<unsigned long long>(partition_records_[j]));
        std::printf("], \"per_node\": [");
        for (size_t i = 0; i < per.size(); ++i) {
            std::printf(
                "%s{\"node\": %zu, \"disk_read_mb_s\": %.1f, \"disk_write_mb_s\": %.1f, "
                "\"phases\": [",
                i ? ", " : "", i, checks_[i].disk_read_mb_s, checks_[i].disk_write_mb_s);
            for (size_t k = 0; k < per[i].size(); ++k) {
                const PhaseFigures &f = per[i][k];
                std::printf(
                    "%s{\"phase\": \"%s\", \"seconds\": %.4f, \"cpu_seconds\": %.4f, "
                    "\"mb_s\": %.1f, \"bytes_read\": %llu, \"bytes_written\": %llu, "
                    "\"bytes_sent\": %llu, \"bytes_received\": %llu, "
                    "\"expected_seconds\": %.4f, \"ratio\": %.3f}",
                    k ? ", " : "", json_escape(f.phase).c_str(), f.seconds, f.cpu_seconds, mbps(f),
                    static_cast<unsigned long long>(f.bytes_read),
                    static_cast<unsigned long long>(f.bytes_written),
                    static_cast<unsigned long long>(f.bytes_sent),
                    static_cast<unsigned long long>(f.bytes_received), f.expected_seconds,
                    f.expected_seconds > 0 ? f.seconds / f.expected_seconds : 0.0);
            }
            std::printf("]}");
        }
        std::printf("], \"stragglers\": [");
        for (size_t k = 0; k < slow.size(); ++k)
            std::printf(
                "%s{\"node\": %zu, \"phase\": \"%s\", \"resource\": \"%s\", "
                "\"vs_median\": %.2f}",
                k ? ", " : "", slow[k].node, json_escape(slow[k].phase).c_str(),
                slow[k].resource.c_str(), slow[k].factor);
        std::printf("]}\n");
        return;
    }
    std::printf("sortapp run: %d nodes, %llu records of %llu bytes (%.1f MB), %.3f s, %.1f MB/s\n",
                n_, static_cast<unsigned long long>(records),
                static_cast<unsigned long long>(o_.params.record_size),
                records * o_.params.record_size / 1e6, total_s,
                total_s > 0 ? records * o_.params.record_size / total_s / 1e6 : 0.0);
    std::printf(
        "phases 1+2 %.3f s | phase 3a %.4f s in %u rounds | phase 3b %.3f s | "
        "network %.1f MB/s per node (measured), disk write %.1f MB/s per node (median share)\n",
        local_s_, select_s_, rounds_, merge_s_, network_mb_s_, disk_write);
    std::printf("%4s %-10s %8s %8s %6s %9s %6s %9s %9s %9s %9s\n", "node", "phase", "seconds",
                "MB/s", "CPU%", "expected", "ratio", "read MB", "write MB", "sent MB", "recv MB");
    for (size_t i = 0; i < per.size(); ++i)
        for (const PhaseFigures &f : per[i])
            std::printf("%4zu %-10s %8.3f %8.1f %6.0f %9.3f %6.2f %9.1f %9.1f %9.1f %9.1f\n", i,
                        f.phase.c_str(), f.seconds, mbps(f),
                        f.seconds > 0 ? 100 * f.cpu_seconds / f.seconds : 0.0, f.expected_seconds,
                        f.expected_seconds > 0 ? f.seconds / f.expected_seconds : 0.0,
                        f.bytes_read / 1e6, f.bytes_written / 1e6, f.bytes_sent / 1e6,
                        f.bytes_received / 1e6);
    std::printf("partition records:");
    for (uint64_t c : partition_records_) std::printf(" %llu", static_cast<unsigned long long>(c));
    std::printf("\n");
    if (slow.empty()) {
        std::printf("stragglers: none (threshold %.2fx the median)\n", o_.straggler);
    } else {
        for (const Straggler &s : slow)
            std::printf("straggler: node %zu, %s, %.2fx the median, lagging on %s\n", s.node,
                        s.phase.c_str(), s.factor, s.resource.c_str());
    }
}

}  // namespace

int monitor_main(const JobOptions &opts, msg_context_t *msg, int nodes) {
    Monitor m(opts, msg, nodes);
    return m.run();
}

}  // namespace sortapp::cluster
