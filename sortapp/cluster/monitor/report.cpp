// The monitor's report of a job that succeeded: per node and phase, seconds, MB/s and CPU
// against the expectation from the measured disk and network bandwidth, and the needles (the
// nodes slower than the median of the same phase, with the counter that shows why), as text
// or as one JSON object.
#include "sortapp/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "monitor/state.hpp"
#include "sortapp/expectation.hpp"

namespace sortapp::cluster {

namespace {

// A node's measured rates, its share of them when `sharing` nodes use its disk.
Rates shared_rates(const NodeCheck &c, uint32_t sharing, double network_mb_s) {
    const double n = std::max<uint32_t>(sharing, 1);
    return Rates{c.disk_read_mb_s / n, c.disk_write_mb_s / n, c.disk_mixed_mb_s / n, network_mb_s};
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// A phase that beat its expectation by more than the margin: the figure behind it is stale.
struct StaleFigure {
    size_t node;
    std::string phase;
    double seconds, expected;
};

// What the report prints, gathered from the job's figures.
struct Report {
    uint64_t records = 0;
    double disk_write = 0;                       // MB/s, the median node's share of its disk
    std::vector<std::vector<PhaseFigures>> per;  // all phases per node, in order
    std::vector<Needle> needles;
    std::vector<StaleFigure> stale;
    // CPU-seconds (user + system) per GB of input: each phase's over all nodes, in the order
    // the phases first appear; the nodes' whole processes from start to end (their last
    // counter sample: shadow threads and the steps between phases included); the monitor's
    // own; and the job's, nodes and monitor. All 0 when no record was sorted.
    std::vector<std::pair<std::string, double>> cpu_per_gb;
    double nodes_cpu_per_gb = 0;
    double monitor_cpu_per_gb = 0;
    double cpu_per_gb_total = 0;
    // Each node's largest resident memory in its counter samples (0: none arrived), the
    // largest of them (and its node) and their sum.
    std::vector<uint64_t> peak_rss;
    size_t peak_rss_node = 0;
    uint64_t peak_rss_largest = 0, peak_rss_total = 0;
};

// Report::peak_rss and its largest and total from the counter samples.
void add_peak_rss(const JobFigures &job, Report &r) {
    r.peak_rss.assign(r.per.size(), 0);
    for (size_t i = 0; i < r.per.size() && i < job.counters.size(); ++i)
        for (const viaduct::CounterSample &c : job.counters[i].samples)
            r.peak_rss[i] = std::max(r.peak_rss[i], c.rss_bytes);
    for (size_t i = 0; i < r.peak_rss.size(); ++i) {
        r.peak_rss_total += r.peak_rss[i];
        if (r.peak_rss[i] > r.peak_rss_largest)
            r.peak_rss_largest = r.peak_rss[i], r.peak_rss_node = i;
    }
}

// Report::cpu_per_gb and the rest. A node whose counters never arrived counts its phases.
void add_cpu_per_gb(const JobFigures &job, double gb, Report &r) {
    if (!(gb > 0)) return;
    for (size_t i = 0; i < r.per.size(); ++i) {
        double phases = 0;
        for (const PhaseFigures &f : r.per[i]) {
            auto it = std::find_if(r.cpu_per_gb.begin(), r.cpu_per_gb.end(),
                                   [&f](const auto &p) { return p.first == f.phase; });
            if (it == r.cpu_per_gb.end()) it = r.cpu_per_gb.insert(it, {f.phase, 0.0});
            it->second += f.cpu_seconds / gb;
            phases += f.cpu_seconds;
        }
        const bool sampled = i < job.counters.size() && !job.counters[i].samples.empty();
        const viaduct::CounterSample *last = sampled ? &job.counters[i].samples.back() : nullptr;
        const double whole =
            last != nullptr ? static_cast<double>(last->proc_user_us + last->proc_sys_us) / 1e6 : 0;
        r.nodes_cpu_per_gb += std::max(whole, phases) / gb;
    }
    r.monitor_cpu_per_gb = Stopwatch::now().cpu / gb;
    r.cpu_per_gb_total = r.nodes_cpu_per_gb + r.monitor_cpu_per_gb;
}

double mbps(const PhaseFigures &f) {
    uint64_t b = std::max({f.bytes_read + f.bytes_received, f.bytes_written});
    return f.seconds > 0 ? b / f.seconds / 1e6 : 0.0;
}

// A phase's expectation from what it moved, its disk reads and writes going on at once (the
// mixed rate) beside the network, and the resource that bounds it.
void expect_phase(PhaseFigures &f, PhaseVolume v, const Rates &rates) {
    v.read_write_overlap = true;
    PhaseVolume net = v;
    net.read = net.write = 0;
    f.expected_seconds = expected_seconds(v, rates);
    const double net_s = expected_seconds(net, rates);
    f.resource = net_s > 0 && net_s >= f.expected_seconds ? "network" : "disk";
}

// Phase 3b's expectations from the measured disk and network bandwidth. A disk shared by
// several nodes gives each its share. Returns the median disk write share.
double expect_merge(JobFigures &job) {
    std::vector<double> dw, dr, dm;
    const std::vector<uint32_t> sharing = nodes_sharing_disk(job.checks);
    for (size_t i = 0; i < job.checks.size(); ++i) {
        const Rates node = shared_rates(job.checks[i], sharing[i], job.network_mb_s);
        dw.push_back(node.disk_write);
        dr.push_back(node.disk_read);
        dm.push_back(node.disk_mixed);
    }
    const Rates rates{median(dr), median(dw), median(dm), job.network_mb_s};
    for (size_t i = 0; i < job.merge.size(); ++i) {
        PhaseFigures &f = job.merge[i];
        f.bytes_sent = i < job.served.size() ? job.served[i].bytes_sent : 0;
        // All at once: receiving over the network, writing the output, and reading the work
        // file for everyone who pulls from this node (itself included).
        PhaseVolume v;
        v.read = f.bytes_sent;
        v.write = f.bytes_written;
        v.receive = f.bytes_received;
        expect_phase(f, v, rates);
    }
    return rates.disk_write;
}

// The river sort's expectations: its first phase reads the input and writes the runs (two
// passes) while sending and receiving, so the slower of the disk and the network bounds it;
// the second writes the output once (one pass), or reads the runs and writes the output. A
// phase that reads and writes does both at once: the disk's mixed rate.
double expect_river(JobFigures &job) {
    std::vector<double> dw;
    const std::vector<uint32_t> sharing = nodes_sharing_disk(job.checks);
    for (size_t i = 0; i < job.local.size() && i < job.checks.size(); ++i) {
        const Rates rates = shared_rates(job.checks[i], sharing[i], job.network_mb_s);
        dw.push_back(rates.disk_write);
        for (PhaseFigures &f : job.local[i].phases) {
            PhaseVolume v;
            v.read = f.bytes_read;
            v.write = f.bytes_written;
            v.send = f.bytes_sent;
            v.receive = f.bytes_received;
            expect_phase(f, v, rates);
        }
    }
    return median(dw);
}

// Largest partition over the mean (1.0: perfectly even).
double balance(const std::vector<uint64_t> &parts) {
    uint64_t total = 0, most = 0;
    for (uint64_t p : parts) total += p, most = std::max(most, p);
    return total > 0 ? static_cast<double>(most) * parts.size() / total : 1.0;
}

Report gather(const JobOptions &o, JobFigures &job) {
    Report r;
    for (const LocalDone &d : job.local) r.records += d.records;
    r.disk_write = o.params.algorithm == kRiver ? expect_river(job) : expect_merge(job);
    r.per.resize(job.local.size());
    for (size_t i = 0; i < job.local.size(); ++i) {
        r.per[i] = job.local[i].phases;
        if (i < job.merge.size()) r.per[i].push_back(job.merge[i]);
    }
    r.needles = job_needles(o, job, r.per);
    add_cpu_per_gb(job, static_cast<double>(r.records * o.params.record_size) / 1e9, r);
    add_peak_rss(job, r);
    // Phases 1 and 2 are also judged on the node itself (sortapp local's code), which marks
    // its cached figure stale; nothing is measured again unless asked (--remeasure).
    for (size_t i = 0; i < r.per.size(); ++i)
        for (const PhaseFigures &f : r.per[i])
            if (beats_expectation(f.seconds, f.expected_seconds))
                r.stale.push_back({i, f.phase, f.seconds, f.expected_seconds});
    return r;
}

using Json = nlohmann::ordered_json;

// A figure to `decimals` places, as the text report shows it (NaN and infinity: null).
double rounded(double v, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(v * scale) / scale;
}

Json phases_json(const std::vector<PhaseFigures> &phases) {
    Json out = Json::array();
    for (const PhaseFigures &f : phases)
        out.push_back(
            {{"phase", f.phase},
             {"seconds", rounded(f.seconds, 4)},
             {"cpu_seconds", rounded(f.cpu_seconds, 4)},
             {"mb_s", rounded(mbps(f), 1)},
             {"bytes_read", f.bytes_read},
             {"bytes_written", f.bytes_written},
             {"bytes_sent", f.bytes_sent},
             {"bytes_received", f.bytes_received},
             {"expected_seconds", rounded(f.expected_seconds, 4)},
             {"ratio", rounded(f.expected_seconds > 0 ? f.seconds / f.expected_seconds : 0.0, 3)},
             {"stale_figure", beats_expectation(f.seconds, f.expected_seconds)}});
    return out;
}

// The river algorithm's own figures, or just its name.
void add_algorithm_json(Json &doc, const JobOptions &o, const JobFigures &job) {
    if (o.params.algorithm != kRiver) {
        doc["algorithm"] = "three-phase";
        return;
    }
    uint32_t one_pass = 0;
    for (const RiverDone &d : job.river) one_pass += d.one_pass;
    doc["algorithm"] = "river";
    doc["samples"] = job.samples;
    doc["sampling_seconds"] = rounded(job.sample_s, 4);
    doc["river_seconds"] = rounded(job.river_s, 3);
    doc["one_pass_nodes"] = one_pass;
}

Json stale_json(const std::vector<StaleFigure> &stale) {
    Json out = Json::array();
    for (const StaleFigure &f : stale)
        out.push_back({{"node", f.node},
                       {"phase", f.phase},
                       {"seconds", rounded(f.seconds, 4)},
                       {"expected_seconds", rounded(f.expected, 4)},
                       {"times_faster", rounded(f.expected / std::max(f.seconds, 1e-9), 2)}});
    return out;
}

// "node 2", "nodes 0-3", "nodes 0, 2, 5-7": node numbers in ascending order.
std::string node_list(const std::vector<size_t> &nodes) {
    std::string out = nodes.size() == 1 ? "node " : "nodes ";
    for (size_t i = 0; i < nodes.size();) {
        size_t j = i;
        while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
        out += (i ? ", " : "") + std::to_string(nodes[i]);
        if (j > i) out += "-" + std::to_string(nodes[j]);
        i = j + 1;
    }
    return out;
}

// How many times faster than expected, "1.6" or "25" (a tenth matters only below 10).
std::string times(double x) {
    char text[32];
    std::snprintf(text, sizeof text, x < 10 ? "%.1f" : "%.0f", x);
    return text;
}

// One phase's stale figures: the nodes and how much faster than expected they ran.
struct StalePhase {
    std::string phase;
    std::vector<size_t> nodes;
    double least = 0, most = 0;
    std::string range() const {
        const std::string lo = times(least), hi = times(most);
        return (lo == hi ? lo : lo + "-" + hi) + "x";
    }
};

// The stale figures as one cause, in one line: which nodes ran which phases how much faster
// than their disk figures predicted, and how to measure them again (only when asked: a probe
// inside a sort would slow the sort). The per-node
// figures are the JSON's (stale_figures) and the timeline's.
std::string stale_cause(const std::vector<StaleFigure> &stale) {
    if (stale.empty()) return "";
    std::vector<StalePhase> phases;
    std::vector<size_t> all;
    for (const StaleFigure &f : stale) {
        auto it = std::find_if(phases.begin(), phases.end(),
                               [&](const StalePhase &p) { return p.phase == f.phase; });
        if (it == phases.end())
            it = phases.insert(phases.end(), {f.phase, {}, std::numeric_limits<double>::max(), 0});
        const double x = f.expected / std::max(f.seconds, 1e-9);
        it->nodes.push_back(f.node);
        it->least = std::min(it->least, x);
        it->most = std::max(it->most, x);
        all.push_back(f.node);
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    for (StalePhase &p : phases) std::sort(p.nodes.begin(), p.nodes.end());
    const bool same = std::all_of(phases.begin(), phases.end(),
                                  [&](const StalePhase &p) { return p.nodes == all; });
    const std::string faster = " faster than their disk figures predicted";
    std::string out = "stale disk figures: ";
    if (same) {
        // "nodes 0-3 ran phase 1 1.6-2.1x and phase 3b 1.4x faster than ..."
        out += node_list(all) + " ran ";
        for (size_t i = 0; i < phases.size(); ++i) {
            const char *between = i == 0 ? "" : i + 1 == phases.size() ? " and " : ", ";
            out += between + phases[i].phase + " " + phases[i].range();
        }
        out += faster;
    } else {
        // "phase 1 ran 1.6x faster than ... on node 2, phase 3b 1.4x on nodes 0-3"
        for (size_t i = 0; i < phases.size(); ++i)
            out += (i == 0 ? "" : ", ") + phases[i].phase + (i == 0 ? " ran " : " ") +
                   phases[i].range() + (i == 0 ? faster : "") + " on " + node_list(phases[i].nodes);
    }
    return out + "; kept until --remeasure (or sortapp probe) measures the disks again";
}

// The start-up, in seconds after `sortapp run` started: every process joined (the monitor's
// msg_init returned), the check done (the first work order goes out), the commit done. Known
// only when run said when it started and the clocks agree on the order of these.
struct Startup {
    bool known = false;
    double joined = 0, first_order = 0, committed = 0;
};

Startup startup(const JobOptions &o, const JobFigures &job) {
    Startup s;
    const int64_t at = o.launched_us;
    if (at <= 0 || o.joined_us < at || job.checked_us < o.joined_us ||
        job.committed_us < job.checked_us)
        return s;
    s.known = true;
    s.joined = static_cast<double>(o.joined_us - at) / 1e6;
    s.first_order = static_cast<double>(job.checked_us - at) / 1e6;
    s.committed = static_cast<double>(job.committed_us - at) / 1e6;
    return s;
}

void print_json(const JobOptions &o, int nodes, const JobFigures &job, const Report &r,
                double total_s) {
    Json doc = {{"nodes", nodes},
                {"records", r.records},
                {"record_size", o.params.record_size},
                {"seconds", rounded(total_s, 3)},
                {"phases_1_2_seconds", rounded(job.local_s, 3)},
                {"phase_3a", {{"rounds", job.rounds}, {"seconds", rounded(job.select_s, 4)}}},
                {"phase_3b_seconds", rounded(job.merge_s, 3)},
                {"network_mb_s", rounded(job.network_mb_s, 1)},
                {"partition_records", job.partition_records},
                {"balance", rounded(balance(job.partition_records), 4)}};
    add_algorithm_json(doc, o, job);
    if (const Startup s = startup(o, job); s.known)
        doc["startup"] = {{"joined_s", rounded(s.joined, 4)},
                          {"first_order_s", rounded(s.first_order, 4)},
                          {"committed_s", rounded(s.committed, 4)}};
    Json per = Json::array(), needles = Json::array();
    for (size_t i = 0; i < r.per.size(); ++i)
        per.push_back({{"node", i},
                       {"disk_read_mb_s", rounded(job.checks[i].disk_read_mb_s, 1)},
                       {"disk_write_mb_s", rounded(job.checks[i].disk_write_mb_s, 1)},
                       {"disk_mixed_mb_s", rounded(job.checks[i].disk_mixed_mb_s, 1)},
                       {"peak_rss_bytes", r.peak_rss[i]},
                       {"phases", phases_json(r.per[i])}});
    for (const Needle &n : r.needles)
        needles.push_back({{"node", n.node},
                           {"phase", n.phase},
                           {"ratio", rounded(n.ratio, 3)},
                           {"cause", n.cause},
                           {"text", n.text},
                           {"figures", n.figures}});
    doc["per_node"] = per;
    Json samples = Json::array();
    uint64_t lost = 0;
    for (const NodeCounters &c : job.counters) samples.push_back(c.samples.size()), lost += c.lost;
    doc["sample_hz"] = o.sample_hz;
    doc["counter_samples"] = samples;
    doc["counter_samples_lost"] = lost;
    doc["straggler_threshold"] = o.straggler;
    doc["needles"] = needles;
    doc["stale_figures"] = stale_json(r.stale);
    Json cpu_phases = Json::object();
    for (const auto &[phase, v] : r.cpu_per_gb) cpu_phases[phase] = rounded(v, 3);
    doc["cpu_seconds_per_gb"] = {{"total", rounded(r.cpu_per_gb_total, 3)},
                                 {"nodes", rounded(r.nodes_cpu_per_gb, 3)},
                                 {"monitor", rounded(r.monitor_cpu_per_gb, 3)},
                                 {"phases", cpu_phases}};
    doc["peak_rss_bytes"] = {{"largest", r.peak_rss_largest}, {"total", r.peak_rss_total}};
    std::printf("%s\n", doc.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
}

// The job's totals and the algorithm's steps, the report's first lines.
void add_summary(std::string &out, const JobOptions &o, int nodes, const JobFigures &job,
                 const Report &r, double total_s) {
    const double bytes = static_cast<double>(r.records * o.params.record_size);
    out += printed("sortapp: %d nodes, %llu records of %llu bytes (%.1f MB), %.3f s, %.1f MB/s\n",
                   nodes, static_cast<unsigned long long>(r.records),
                   static_cast<unsigned long long>(o.params.record_size), bytes / 1e6, total_s,
                   total_s > 0 ? bytes / total_s / 1e6 : 0.0);
    if (o.params.algorithm == kRiver) {
        uint32_t one_pass = 0;
        for (const RiverDone &d : job.river) one_pass += d.one_pass;
        out += printed(
            "river algorithm: sampling %.4f s (%llu samples) | river sort %.3f s (%u of %d "
            "nodes in one pass) | network %.1f MB/s per node, disk write %.1f MB/s per node "
            "(median share)\n",
            job.sample_s, static_cast<unsigned long long>(job.samples), job.river_s, one_pass,
            nodes, job.network_mb_s, r.disk_write);
    } else {
        out += printed(
            "phases 1+2 %.3f s | phase 3a %.3f s in %u rounds | phase 3b %.3f s | "
            "network %.1f MB/s per node (measured), disk write %.1f MB/s per node (median "
            "share)\n",
            job.local_s, job.select_s, job.rounds, job.merge_s, job.network_mb_s, r.disk_write);
    }
    if (const Startup s = startup(o, job); s.known)
        out += printed(
            "start-up: %.3f s from sortapp run to the first order (%.3f s to join the job, %.3f "
            "s checking); the commit ended %.3f s after sortapp run started\n",
            s.first_order, s.joined, s.first_order - s.joined, s.committed);
}

// How many counter samples came from the nodes, and how many never did.
void add_counters(std::string &out, const JobOptions &o, const JobFigures &job) {
    uint64_t got = 0, lost = 0;
    for (const NodeCounters &c : job.counters) got += c.samples.size(), lost += c.lost;
    out += printed("counters: %llu samples from %zu nodes at %g a second",
                   static_cast<unsigned long long>(got), job.counters.size(), o.sample_hz);
    if (lost > 0) out += printed(" (%llu lost)", static_cast<unsigned long long>(lost));
    out += printed("\n");
}

// The nodes' peak resident memory, which every byte of the kernel had to hand out fresh.
void add_memory(std::string &out, const Report &r) {
    if (r.peak_rss_total == 0) return;
    out += printed(
        "memory: %.1f MB peak resident on node %zu, the largest; %.1f MB over all %zu "
        "nodes (their counter samples)\n",
        r.peak_rss_largest / 1e6, r.peak_rss_node, r.peak_rss_total / 1e6, r.peak_rss.size());
}

std::string text_report(const JobOptions &o, int nodes, const JobFigures &job, const Report &r,
                        double total_s) {
    std::string out;
    add_summary(out, o, nodes, job, r, total_s);
    out +=
        printed("%4s %-10s %8s %8s %6s %9s %6s %9s %9s %9s %9s\n", "node", "phase", "seconds",
                "MB/s", "CPU%", "expected", "ratio", "read MB", "write MB", "sent MB", "recv MB");
    for (size_t i = 0; i < r.per.size(); ++i)
        for (const PhaseFigures &f : r.per[i])
            out += printed(
                "%4zu %-10s %8.3f %8.1f %6.0f %9.3f %6.2f %9.1f %9.1f %9.1f %9.1f\n", i,
                f.phase.c_str(), f.seconds, mbps(f),
                f.seconds > 0 ? 100 * f.cpu_seconds / f.seconds : 0.0, f.expected_seconds,
                f.expected_seconds > 0 ? f.seconds / f.expected_seconds : 0.0, f.bytes_read / 1e6,
                f.bytes_written / 1e6, f.bytes_sent / 1e6, f.bytes_received / 1e6);
    out += printed("partition records:");
    for (uint64_t c : job.partition_records)
        out += printed(" %llu", static_cast<unsigned long long>(c));
    out += printed(" (largest %.2f%% over the mean)\n", 100 * (balance(job.partition_records) - 1));
    add_counters(out, o, job);
    if (r.cpu_per_gb_total > 0) {
        out += printed(
            "CPU: %.2f CPU-seconds per GB sorted (user + system: the nodes' processes %.2f, the "
            "monitor %.2f); by phase, over the nodes:",
            r.cpu_per_gb_total, r.nodes_cpu_per_gb, r.monitor_cpu_per_gb);
        for (size_t k = 0; k < r.cpu_per_gb.size(); ++k)
            out += printed("%s %s %.2f", k == 0 ? "" : ",", r.cpu_per_gb[k].first.c_str(),
                           r.cpu_per_gb[k].second);
        out += printed("\n");
    }
    add_memory(out, r);
    if (r.needles.empty())
        out += printed("needles: none (threshold %.2fx the median)\n", o.straggler);
    for (const Needle &n : r.needles) out += printed("%s\n", n.text.c_str());
    if (!r.stale.empty()) out += printed("%s\n", stale_cause(r.stale).c_str());
    return out;
}

// The stale figures node by node, for the timeline's copy of the report.
std::string stale_details(const std::vector<StaleFigure> &stale) {
    std::string out;
    for (const StaleFigure &s : stale)
        out += printed("stale figure: node %zu, %s, %.3f s against %.3f s expected\n", s.node,
                       s.phase.c_str(), s.seconds, s.expected);
    return out;
}

}  // namespace

ReportText print_report(const JobOptions &o, int nodes, JobFigures &job, double total_s) {
    const Report r = gather(o, job);
    ReportText out;
    out.text = text_report(o, nodes, job, r, total_s);
    for (const Needle &n : r.needles) out.needles.push_back(n.text);
    // Each cause once: in the text report, or beside the JSON (on stderr, so that stdout
    // holds one object) whose stale_figures hold it node by node.
    if (o.json) {
        if (!r.stale.empty())
            std::fprintf(stderr, "sortapp: warning: %s\n", stale_cause(r.stale).c_str());
        print_json(o, nodes, job, r, total_s);
    } else {
        std::fputs(out.text.c_str(), stdout);
    }
    out.text += stale_details(r.stale);
    return out;
}

std::vector<uint32_t> nodes_sharing_disk(const std::vector<NodeCheck> &checks) {
    std::map<std::string, uint32_t> per_disk;
    for (const NodeCheck &c : checks) ++per_disk[c.disk];
    std::vector<uint32_t> sharing;
    for (const NodeCheck &c : checks) sharing.push_back(per_disk[c.disk]);
    return sharing;
}

}  // namespace sortapp::cluster
