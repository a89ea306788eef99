// The monitor: sends the parameters, has every node check its input, runs
// phases 1 and 2 everywhere at once, drives phase 3a's selection rounds,
// orders phase 3b, and prints the report — per node and phase, against the
// expectation from measured disk and network bandwidth, with stragglers named.
#include <rio/rio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "messages.hpp"
#include "node.hpp"
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
    void finish(bool aborted);
    void report(double total_s);
    void progress(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void draw_progress();
    double last_draw_ = 0;
    std::vector<uint64_t> last_done_;
    std::vector<std::string> last_phase_;

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
};

std::vector<Answer> Monitor::ask_all(uint32_t command, int target,
                                     const std::function<std::vector<char>(int)> &payload,
                                     size_t reply_capacity) {
    std::vector<Answer> answers(static_cast<size_t>(n_));
    std::vector<std::vector<char>> requests(static_cast<size_t>(n_));
    int outstanding = 0;
    for (int i = 0; i < n_; ++i) {
        auto &a = answers[static_cast<size_t>(i)];
        requests[static_cast<size_t>(i)] = payload ? payload(i) : std::vector<char>{};
        a.data.resize(reply_capacity);
        const auto &req = requests[static_cast<size_t>(i)];
        int rc = rio_request(rio_, i, target, command, req.data(), req.size(), a.data.data(),
                             a.data.size(), cq_, &a);
        if (rc != RIO_OK) {
            a.status = rc;
            a.data.clear();
        } else {
            ++outstanding;
        }
    }
    const bool show = tty_ && !o_.json && (command == kCmdLocal || command == kCmdMerge);
    while (outstanding > 0) {
        msg_completion_t c;
        int rc = msg_cq_wait(cq_, show ? 500 : -1, &c);
        if (rc == MSG_ERR_TIMEOUT && show) {
            draw_progress();
            continue;
        }
        if (rc != MSG_OK) {
            for (auto &a : answers)
                if (a.status == 0) a.status = rc;
            break;
        }
        auto *a = static_cast<Answer *>(c.cookie);
        a->status = c.status;
        a->data.resize(c.bytes);
        --outstanding;
    }
    if (show) std::fputs("\r\033[K", stderr);
    return answers;
}

// One line on the terminal: each node's phase, percent and MB/s since the last look.
void Monitor::draw_progress() {
    const double t = now_s();
    std::string line;
    last_done_.resize(static_cast<size_t>(n_), 0);
    last_phase_.resize(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i) {
        PhaseFigures f;
        std::vector<char> buf(4096);
        size_t got = 0;
        int rc = rio_call(rio_, i, RIO_TARGET_SHADOW, kCmdProgress, nullptr, 0, buf.data(),
                          buf.size(), &got);
        char part[96];
        if (rc == RIO_OK && decode(buf.data(), got, f) && f.bytes_written > 0) {
            const auto k = static_cast<size_t>(i);
            const bool same = last_draw_ > 0 && last_phase_[k] == f.phase &&
                              f.bytes_read >= last_done_[k];
            double mbps = same ? (f.bytes_read - last_done_[k]) / (t - last_draw_) / 1e6 : 0;
            last_done_[k] = f.bytes_read;
            last_phase_[k] = f.phase;
            std::snprintf(part, sizeof part, "n%d %s %3.0f%% %5.0f MB/s", i, f.phase.c_str(),
                          100.0 * f.bytes_read / f.bytes_written, mbps);
        } else {
            std::snprintf(part, sizeof part, "n%d %s", i,
                          rc == RIO_OK ? f.phase.c_str() : "?");
        }
        line += (i ? " | " : "") + std::string(part);
    }
    last_draw_ = t;
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
}

std::string Monitor::failure(const std::vector<Answer> &answers, const char *step) {
    for (size_t i = 0; i < answers.size(); ++i) {
        const Answer &a = answers[i];
        if (a.status == RIO_OK) continue;
        std::string why = a.status == kNodeError ? std::string(a.data.begin(), a.data.end())
                          : a.status == MSG_ERR_PEER_FAILED
                              ? "the sort process exited or was killed"
                              : rio_strerror(a.status);
        return "node " + std::to_string(i) + ", " + step + ": " + why;
    }
    return {};
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

void Monitor::finish(bool aborted) {
    uint32_t flag = aborted ? 1 : 0;
    auto answers = ask_all(
        kCmdDone, RIO_TARGET_WORKER,
        [&](int) { return std::vector<char>(reinterpret_cast<char *>(&flag),
                                            reinterpret_cast<char *>(&flag) + sizeof flag); },
        4096);
    served_.assign(static_cast<size_t>(n_), {});
    for (size_t i = 0; i < answers.size(); ++i)
        if (answers[i].status == RIO_OK)
            decode(answers[i].data.data(), answers[i].data.size(), served_[i]);
}

int Monitor::run() {
    tty_ = isatty(STDERR_FILENO) != 0;
    if (msg_cq_create(msg_, &cq_) != MSG_OK || rio_init(msg_, nullptr, nullptr, &rio_) != RIO_OK) {
        std::fprintf(stderr, "sortapp: monitor: cannot start libremoteio\n");
        return 1;
    }
    int code = 0;
    const double t0 = now_s();
    std::string why;
    // Every node checks its input and output before anyone does any work.
    auto answers = ask_all(kCmdCheck, RIO_TARGET_WORKER,
                           [&](int) { return encode(o_.params); }, 4096);
    why = failure(answers, "checking");
    if (why.empty()) {
        for (auto &a : answers) {
            NodeCheck c;
            decode(a.data.data(), a.data.size(), c);
            checks_.push_back(c);
        }
        progress("%d nodes ready; phases 1 and 2 (local sort) on every node", n_);
        std::map<std::string, uint32_t> per_disk;
        for (const NodeCheck &c : checks_) ++per_disk[c.disk];
        double t = now_s();
        answers = ask_all(
            kCmdLocal, RIO_TARGET_WORKER,
            [&](int i) {
                uint32_t sharing = per_disk[checks_[static_cast<size_t>(i)].disk];
                const char *p = reinterpret_cast<const char *>(&sharing);
                return std::vector<char>(p, p + sizeof sharing);
            },
            1 << 16);
        local_s_ = now_s() - t;
        why = failure(answers, "phases 1 and 2");
    }
    if (why.empty()) {
        for (auto &a : answers) {
            LocalDone d;
            decode(a.data.data(), a.data.size(), d);
            local_.push_back(d);
        }
        // Phase 3a: exact splitting.
        double t = now_s();
        std::vector<uint64_t> sizes;
        for (const LocalDone &d : local_) sizes.push_back(d.records);
        Selector sel(sizes, static_cast<uint32_t>(n_));
        while (why.empty() && !sel.done()) {
            answers = ask_all(kCmdSamples, RIO_TARGET_SHADOW,
                              [&](int i) { return encode(sel.sample_request(static_cast<uint32_t>(i))); },
                              32u << 20);
            why = failure(answers, "phase 3a sampling");
            for (int i = 0; why.empty() && i < n_; ++i) {
                SampleReply r;
                const auto &a = answers[static_cast<size_t>(i)];
                if (!decode(a.data.data(), a.data.size(), r)) why = "node " + std::to_string(i) + ": malformed samples";
                else sel.take_samples(static_cast<uint32_t>(i), r);
            }
            if (!why.empty()) break;
            sel.choose_pivots();
            if (sel.done()) break;
            answers = ask_all(kCmdCounts, RIO_TARGET_SHADOW,
                              [&](int i) { return encode(sel.count_request(static_cast<uint32_t>(i))); },
                              1u << 20);
            why = failure(answers, "phase 3a counting");
            for (int i = 0; why.empty() && i < n_; ++i) {
                CountReply r;
                const auto &a = answers[static_cast<size_t>(i)];
                if (!decode(a.data.data(), a.data.size(), r)) why = "node " + std::to_string(i) + ": malformed counts";
                else sel.take_counts(static_cast<uint32_t>(i), r);
            }
        }
        select_s_ = now_s() - t;
        rounds_ = sel.rounds();
        if (why.empty()) {
            auto starts = sel.starts();
            for (int j = 0; j < n_; ++j) {
                uint64_t c = 0;
                for (int i = 0; i < n_; ++i) c += starts[j + 1][i] - starts[j][i];
                partition_records_.push_back(c);
            }
            progress("phase 3a: %u rounds, %.3f s", rounds_, select_s_);
            // The network figure for the expectations.
            if (o_.network_mb_s > 0) {
                network_mb_s_ = o_.network_mb_s;
            } else if (n_ > 1) {
                answers = ask_all(kCmdNetProbe, RIO_TARGET_WORKER, nullptr, 4096);
                std::vector<double> rates;
                for (auto &a : answers) {
                    PhaseFigures f;
                    if (a.status == RIO_OK && decode(a.data.data(), a.data.size(), f) && f.seconds > 0)
                        rates.push_back(f.bytes_received / f.seconds / 1e6);
                }
                if (!rates.empty()) {
                    std::sort(rates.begin(), rates.end());
                    network_mb_s_ = rates[rates.size() / 2];
                }
            }
            // Phase 3b: every node pulls its partition from everyone.
            t = now_s();
            answers = ask_all(kCmdMerge, RIO_TARGET_WORKER,
                              [&](int j) {
                                  MergeOrder m;
                                  m.network_mb_s = network_mb_s_;
                                  for (int i = 0; i < n_; ++i) {
                                      m.handles.push_back(local_[static_cast<size_t>(i)].handle);
                                      m.first.push_back(starts[j][i]);
                                      m.last.push_back(starts[j + 1][i]);
                                  }
                                  return encode(m);
                              },
                              4096);
            merge_s_ = now_s() - t;
            why = failure(answers, "phase 3b");
            if (why.empty())
                for (auto &a : answers) {
                    PhaseFigures f;
                    decode(a.data.data(), a.data.size(), f);
                    merge_.push_back(f);
                }
        }
    }
    const double total = now_s() - t0;
    finish(!why.empty());
    if (!why.empty()) {
        std::fprintf(stderr, "sortapp: the sort failed: %s\n", why.c_str());
        std::fprintf(stderr, "sortapp: no output is left in place\n");
        code = 1;
    } else {
        report(total);
    }
    int rc = rio_finalize(rio_);
    if (rc != RIO_OK && code == 0) code = 1;
    rio_destroy(rio_);
    msg_cq_destroy(cq_);
    return code;
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
        std::printf("{\"nodes\": %d, \"records\": %llu, \"record_size\": %llu, \"seconds\": %.3f, "
                    "\"phases_1_2_seconds\": %.3f, \"phase_3a\": {\"rounds\": %u, \"seconds\": %.4f}, "
                    "\"phase_3b_seconds\": %.3f, \"network_mb_s\": %.1f, \"partition_records\": [",
                    n_, static_cast<unsigned long long>(records),
                    static_cast<unsigned long long>(o_.params.record_size), total_s, local_s_,
                    rounds_, select_s_, merge_s_, network_mb_s_);
        for (size_t j = 0; j < partition_records_.size(); ++j)
            std::printf("%s%llu", j ? ", " : "", static_cast<unsigned long long>(partition_records_[j]));
        std::printf("], \"per_node\": [");
        for (size_t i = 0; i < per.size(); ++i) {
            std::printf("%s{\"node\": %zu, \"disk_read_mb_s\": %.1f, \"disk_write_mb_s\": %.1f, "
                        "\"phases\": [",
                        i ? ", " : "", i, checks_[i].disk_read_mb_s, checks_[i].disk_write_mb_s);
            for (size_t k = 0; k < per[i].size(); ++k) {
                const PhaseFigures &f = per[i][k];
                std::printf("%s{\"phase\": \"%s\", \"seconds\": %.4f, \"cpu_seconds\": %.4f, "
                            "\"mb_s\": %.1f, \"bytes_read\": %llu, \"bytes_written\": %llu, "
                            "\"bytes_sent\": %llu, \"bytes_received\": %llu, "
                            "\"expected_seconds\": %.4f, \"ratio\": %.3f}",
                            k ? ", " : "", json_escape(f.phase).c_str(), f.seconds, f.cpu_seconds,
                            mbps(f), static_cast<unsigned long long>(f.bytes_read),
                            static_cast<unsigned long long>(f.bytes_written),
                            static_cast<unsigned long long>(f.bytes_sent),
                            static_cast<unsigned long long>(f.bytes_received), f.expected_seconds,
                            f.expected_seconds > 0 ? f.seconds / f.expected_seconds : 0.0);
            }
            std::printf("]}");
        }
        std::printf("], \"stragglers\": [");
        for (size_t k = 0; k < slow.size(); ++k)
            std::printf("%s{\"node\": %zu, \"phase\": \"%s\", \"resource\": \"%s\", "
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
    std::printf("phases 1+2 %.3f s | phase 3a %.4f s in %u rounds | phase 3b %.3f s | "
                "network %.1f MB/s per node (measured), disk write %.1f MB/s per node (median share)\n",
                local_s_, select_s_, rounds_, merge_s_, network_mb_s_, disk_write);
    std::printf("%4s %-10s %8s %8s %6s %9s %6s %9s %9s %9s %9s\n", "node", "phase", "seconds",
                "MB/s", "CPU%", "expected", "ratio", "read MB", "write MB", "sent MB", "recv MB");
    for (size_t i = 0; i < per.size(); ++i)
        for (const PhaseFigures &f : per[i])
            std::printf("%4zu %-10s %8.3f %8.1f %6.0f %9.3f %6.2f %9.1f %9.1f %9.1f %9.1f\n", i,
                        f.phase.c_str(), f.seconds, mbps(f),
                        f.seconds > 0 ? 100 * f.cpu_seconds / f.seconds : 0.0,
                        f.expected_seconds,
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
