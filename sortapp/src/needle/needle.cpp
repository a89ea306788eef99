// The needle finder: each phase's stragglers against the median, and the counter that sets
// each one apart from the other nodes of its phase.
#include "sortapp/needle.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sortapp/report.hpp"

namespace sortapp {

namespace {

constexpr double unbounded = std::numeric_limits<double>::infinity();

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t mid = v.size() / 2;
    return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// One node's figures as the finder compares them, or the other nodes' medians of each.
struct Figures {
    double seconds = 0;
    double bytes = 0;  // 0: unknown
    double other_cpu = 0;
    double proc_cpu = 0;
    double disk_mb_s = 0;            // over the phase; 0: no device figure
    double disk_busy = 0;            // 0: unknown
    double disk_delivered_mb_s = 0;  // while busy when that is known, else over the phase
    double disk_expected_mb_s = 0;   // 0: unknown
    double disk_probe_share = 0;     // delivered over expected; 0: unknown
    double major_faults = 0;
    double net_mb_s = 0;  // 0: no figure
};

Figures figures_of(const PhaseCounters &c) {
    Figures f;
    f.seconds = c.seconds;
    f.bytes = static_cast<double>(c.bytes);
    f.other_cpu = c.other_cpu;
    f.proc_cpu = c.proc_cpu;
    f.disk_mb_s = c.disk_mb_s;
    f.disk_busy = c.disk_busy;
    f.disk_delivered_mb_s = c.disk_busy > 0 ? c.disk_mb_s / c.disk_busy : c.disk_mb_s;
    f.disk_expected_mb_s = c.disk_expected_mb_s;
    if (f.disk_delivered_mb_s > 0 && c.disk_expected_mb_s > 0)
        f.disk_probe_share = f.disk_delivered_mb_s / c.disk_expected_mb_s;
    f.major_faults = static_cast<double>(c.major_faults);
    f.net_mb_s = c.net_mb_s;
    return f;
}

// The median of each figure over `others`; a figure where 0 means unknown is the median of
// the nodes that have it.
Figures medians_of(const std::vector<Figures> &others) {
    const auto med = [&](double Figures::*field, bool zero_is_unknown) {
        std::vector<double> v;
        for (const Figures &f : others)
            if (!zero_is_unknown || f.*field > 0) v.push_back(f.*field);
        return median(std::move(v));
    };
    Figures m;
    m.seconds = med(&Figures::seconds, false);
    m.bytes = med(&Figures::bytes, true);
    m.other_cpu = med(&Figures::other_cpu, false);
    m.proc_cpu = med(&Figures::proc_cpu, false);
    m.disk_mb_s = med(&Figures::disk_mb_s, true);
    m.disk_busy = med(&Figures::disk_busy, true);
    m.disk_delivered_mb_s = med(&Figures::disk_delivered_mb_s, true);
    m.disk_expected_mb_s = med(&Figures::disk_expected_mb_s, true);
    m.disk_probe_share = med(&Figures::disk_probe_share, true);
    m.major_faults = med(&Figures::major_faults, false);
    m.net_mb_s = med(&Figures::net_mb_s, true);
    return m;
}

nlohmann::json to_json(const Figures &f) {
    return {{"seconds", f.seconds},
            {"bytes", f.bytes},
            {"other_cpu", f.other_cpu},
            {"proc_cpu", f.proc_cpu},
            {"disk_mb_s", f.disk_mb_s},
            {"disk_busy", f.disk_busy},
            {"disk_delivered_mb_s", f.disk_delivered_mb_s},
            {"disk_expected_mb_s", f.disk_expected_mb_s},
            {"disk_probe_share", f.disk_probe_share},
            {"major_faults", f.major_faults},
            {"net_mb_s", f.net_mb_s}};
}

// A cause whose figure is past its threshold: how far (1: just at it) and what shows it.
struct Evidence {
    std::string cause;
    double strength = 0;
    std::string text;
    // The figure is a rate over the phase, which any slowdown lowers: not evidence on its own
    // when another figure explains the node.
    bool falls_with_slowdown = false;
};

// `n` is the slow node, `o` the others' medians, in the functions below.
std::optional<Evidence> cpu_evidence(const Figures &n, const Figures &o) {
    if (n.other_cpu < needle_cpu_other_min || n.other_cpu < needle_cpu_other_factor * o.other_cpu)
        return std::nullopt;
    const double by_share = n.other_cpu / needle_cpu_other_min;
    const double by_others =
        o.other_cpu > 0 ? n.other_cpu / (needle_cpu_other_factor * o.other_cpu) : unbounded;
    return Evidence{"cpu", std::min(by_share, by_others),
                    printed("other processes took %.0f%% of its CPU against %.0f%% on the others",
                            100 * n.other_cpu, 100 * o.other_cpu),
                    false};
}

std::optional<Evidence> disk_evidence(const Figures &n, const Figures &o) {
    if (n.disk_mb_s <= 0) return std::nullopt;
    if (n.disk_busy > 0 && n.disk_busy < needle_disk_busy_min) return std::nullopt;
    const double delivered = n.disk_delivered_mb_s;
    const char *when = n.disk_busy > 0 ? " while busy" : "";
    Evidence e{"disk", 0, "", n.disk_busy <= 0};
    if (n.disk_probe_share > 0 && o.disk_probe_share > 0) {
        const double share = n.disk_probe_share;
        if (share >= needle_disk_probe_fraction ||
            share >= needle_disk_behind_others * o.disk_probe_share)
            return std::nullopt;
        e.strength = std::min(needle_disk_probe_fraction / share,
                              needle_disk_behind_others * o.disk_probe_share / share);
        e.text = printed(
            "its disk delivered %.0f MB/s%s against %.0f from its probe; the others reached "
            "%.0f%% of theirs",
            delivered, when, n.disk_expected_mb_s, 100 * o.disk_probe_share);
        return e;
    }
    if (o.disk_delivered_mb_s <= 0 ||
        delivered >= needle_disk_probe_fraction * o.disk_delivered_mb_s)
        return std::nullopt;
    e.strength = needle_disk_probe_fraction * o.disk_delivered_mb_s / delivered;
    e.text = printed("its disk delivered %.0f MB/s%s against %.0f on the others", delivered, when,
                     o.disk_delivered_mb_s);
    return e;
}

std::optional<Evidence> paging_evidence(const Figures &n, const Figures &o) {
    const double faults_min = static_cast<double>(needle_paging_faults_min);
    if (n.major_faults <= faults_min || n.major_faults <= needle_paging_factor * o.major_faults)
        return std::nullopt;
    const double by_count = n.major_faults / faults_min;
    const double by_others =
        o.major_faults > 0 ? n.major_faults / (needle_paging_factor * o.major_faults) : unbounded;
    return Evidence{"paging", std::min(by_count, by_others),
                    printed("it paged: %.0f major faults against %.0f on the others",
                            n.major_faults, o.major_faults),
                    false};
}

std::optional<Evidence> network_evidence(const Figures &n, const Figures &o) {
    if (n.net_mb_s <= 0 || o.net_mb_s <= 0) return std::nullopt;
    if (n.net_mb_s >= needle_net_fraction * o.net_mb_s) return std::nullopt;
    if (n.bytes > 0 && o.bytes > 0 && n.bytes < needle_comparable_work * o.bytes)
        return std::nullopt;
    return Evidence{
        "network", needle_net_fraction * o.net_mb_s / n.net_mb_s,
        printed("its network moved %.0f MB/s against %.0f on the others", n.net_mb_s, o.net_mb_s),
        true};
}

std::string bytes_text(double bytes) {
    if (bytes >= 1e9) return printed("%.2f GB", bytes / 1e9);
    if (bytes >= 1e6) return printed("%.1f MB", bytes / 1e6);
    return printed("%.0f bytes", bytes);
}

std::optional<Evidence> partition_evidence(const Figures &n, const Figures &o) {
    if (n.bytes <= 0 || o.bytes <= 0) return std::nullopt;
    const double bytes_ratio = n.bytes / o.bytes;
    if (bytes_ratio < needle_partition_factor) return std::nullopt;
    const double time_ratio = o.seconds > 0 ? n.seconds / o.seconds : 1;
    if (bytes_ratio - 1 < needle_partition_share_of_excess * (time_ratio - 1)) return std::nullopt;
    return Evidence{"partition", bytes_ratio / needle_partition_factor,
                    printed("its partition was %.2fx the others' (%s against %s)", bytes_ratio,
                            bytes_text(n.bytes).c_str(), bytes_text(o.bytes).c_str()),
                    false};
}

// Every figure, for a slow node none of them explains.
std::string unexplained_text(const Figures &n, const Figures &o) {
    std::string text = printed(
        "no counter explains it: other processes %.0f%% of its CPU (others %.0f%%), disk %.0f "
        "MB/s (others %.0f), %.0f major faults (others %.0f), network %.0f MB/s (others %.0f)",
        100 * n.other_cpu, 100 * o.other_cpu, n.disk_delivered_mb_s, o.disk_delivered_mb_s,
        n.major_faults, o.major_faults, n.net_mb_s, o.net_mb_s);
    if (n.bytes > 0 && o.bytes > 0)
        text += printed(", partition %.2fx the others'", n.bytes / o.bytes);
    return text;
}

// The causes past their thresholds, strongest first.
std::vector<Evidence> gather_evidence(const Figures &n, const Figures &o) {
    std::vector<Evidence> all;
    for (auto check :
         {cpu_evidence, disk_evidence, paging_evidence, network_evidence, partition_evidence})
        if (std::optional<Evidence> e = check(n, o)) all.push_back(std::move(*e));
    std::stable_sort(all.begin(), all.end(),
                     [](const Evidence &a, const Evidence &b) { return a.strength > b.strength; });
    return all;
}

Needle describe(const PhaseCounters &node, const std::vector<Figures> &others,
                double median_seconds) {
    const Figures n = figures_of(node);
    const Figures o = medians_of(others);
    const std::vector<Evidence> all = gather_evidence(n, o);
    // The strongest figure that a slowdown does not itself lower; failing that, the strongest
    // of those that it does; a second cause only beside a first of the former kind.
    const auto independent = [](const Evidence &e) { return !e.falls_with_slowdown; };
    auto first = std::find_if(all.begin(), all.end(), independent);
    auto second = first == all.end() ? all.end() : std::find_if(first + 1, all.end(), independent);
    if (first == all.end() && !all.empty()) first = all.begin();

    Needle needle;
    needle.node = node.node;
    needle.phase = node.phase;
    needle.ratio = median_seconds > 0 ? node.seconds / median_seconds : 0;
    needle.cause = first == all.end() ? "unknown" : first->cause;
    needle.text = printed("needle: node %d, %s, %.2fx the median: ", node.node, node.phase.c_str(),
                          needle.ratio);
    needle.text += first == all.end() ? unexplained_text(n, o) : first->text;
    if (second != all.end()) needle.text += "; " + second->text;

    nlohmann::json evidence = nlohmann::json::array();
    for (const Evidence &e : all)
        evidence.push_back({{"cause", e.cause}, {"strength", e.strength}});
    needle.figures = {{"node", to_json(n)},
                      {"others", to_json(o)},
                      {"median_seconds", median_seconds},
                      {"ratio", needle.ratio},
                      {"evidence", std::move(evidence)}};
    return needle;
}

// The stragglers of one phase, appended to `out`.
void judge_phase(const std::vector<const PhaseCounters *> &nodes, double straggler,
                 std::vector<Needle> &out) {
    if (nodes.size() < needle_min_nodes) return;
    std::vector<double> seconds;
    for (const PhaseCounters *c : nodes) seconds.push_back(c->seconds);
    const double median_seconds = median(seconds);
    if (median_seconds <
        std::max(needle_min_phase_seconds, needle_timing_noise_seconds / straggler))
        return;
    for (const PhaseCounters *c : nodes) {
        if (!(c->seconds > median_seconds * (1 + straggler))) continue;
        std::vector<Figures> others;
        for (const PhaseCounters *other : nodes)
            if (other != c) others.push_back(figures_of(*other));
        out.push_back(describe(*c, others, median_seconds));
    }
}

}  // namespace

PhaseCounters summarize(int node, const std::string &phase,
                        const std::vector<viaduct::CounterSample> &samples, std::uint64_t bytes,
                        double disk_expected_mb_s) {
    PhaseCounters c;
    c.node = node;
    c.phase = phase;
    c.bytes = bytes;
    c.disk_expected_mb_s = disk_expected_mb_s;
    if (samples.size() < 2) return c;
    // Cumulative counters: the first and last samples give the time-weighted mean of each rate.
    const viaduct::CounterSample &first = samples.front();
    const viaduct::CounterSample &last = samples.back();
    const viaduct::CounterRates r = viaduct::rates(first, last);
    c.seconds = r.seconds;
    c.other_cpu = r.other_cpu;
    c.proc_cpu = r.proc_cpu;
    c.disk_mb_s = r.dev_read_mb_s + r.dev_write_mb_s;
    c.disk_busy = c.disk_mb_s > 0 ? r.dev_busy : 0;
    c.major_faults =
        last.major_faults >= first.major_faults ? last.major_faults - first.major_faults : 0;
    c.net_mb_s = r.net_sent_mb_s + r.net_received_mb_s;
    return c;
}

std::vector<Needle> find_needles(const std::vector<PhaseCounters> &phases, double straggler) {
    if (!(straggler > 0)) return {};
    std::vector<std::string> order;
    std::map<std::string, std::vector<const PhaseCounters *>> by_phase;
    for (const PhaseCounters &c : phases) {
        auto &nodes = by_phase[c.phase];
        if (nodes.empty()) order.push_back(c.phase);
        nodes.push_back(&c);
    }
    std::vector<Needle> needles;
    for (const std::string &phase : order) judge_phase(by_phase[phase], straggler, needles);
    return needles;
}

}  // namespace sortapp
