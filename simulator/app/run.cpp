// Wall time is measured around the event loop only, so events/s is the engine's speed.
#include "app/run.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>

namespace sansim {
namespace {

// Every pair the workload may use must be connected, both ways for the responses; other
// pairs may be unreachable (a butterfly's sinks need not reach each other). A routing rule
// connects every pair: nothing to walk.
void check_pairs(const Network &net, const Workload &work) {
    if (net.routing().all_reachable()) return;
    const bool back = net.needs_return(work.reads());
    work.each_pair([&](int src, int dst) {
        const std::string why = unreachable_pair(net.topology(), net.routing(), src, dst, back);
        if (!why.empty()) throw TopologyError(why);
    });
}

// A run with no time limit and no window's end must end by itself, and soon enough: past this
// many packets (some 10^10 events, hours of simulation) only a part of the work is sensible.
constexpr double kMaxUnboundedPackets = 1e9;

void check_bounded(const Network &net, const Workload &work, const std::string &kind, Time limit) {
    if (limit > 0) return;
    if (work.open_loop())
        throw std::invalid_argument(kind +
                                    " traffic never ends by itself: give --time-limit-us or "
                                    "--measure");
    const double bytes = work.total_bytes(), packets = bytes / net.params().max_payload;
    if (packets <= kMaxUnboundedPackets) return;
    char figures[160];
    std::snprintf(figures, sizeof figures, "%.3g bytes in %d-byte packets, %.3g packets", bytes,
                  net.params().max_payload, packets);
    const bool recorded = kind == "trace" || kind == "replay";
    throw std::invalid_argument(
        kind + " would move " + figures +
        ", more than sansim simulates in reasonable time (1e9 packets): give --time-limit-us to "
        "simulate a part" +
        (recorded ? std::string()
                  : ", or ask for fewer bytes (--message-bytes, --rounds, --nodes)"));
}

// Sets the window; returns the time limit the run needs (0: none).
Time apply_window(Network &net, const Measurement &m, Time time_limit) {
    if (!m.given()) return time_limit;
    const Time begin = from_us(m.warmup_us);
    const Time end = m.measure_us > 0 ? begin + from_us(m.measure_us) : kForever;
    net.set_window(begin, end);
    if (time_limit > 0 || end == kForever) return time_limit;
    return end + from_us(m.drain_us >= 0 ? m.drain_us : m.measure_us);
}

// The process's peak resident set (Linux reports kilobytes).
std::uint64_t peak_rss_bytes() {
    rusage u{};
    if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
    return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;
}

}  // namespace

Results run_simulation(const Topology &topo, const Params &params, const WorkloadOptions &work,
                       Time time_limit, const Measurement &measure) {
    const auto setup_start = std::chrono::steady_clock::now();
    Network net(topo, params);
    auto wl = make_workload(work, net);
    check_pairs(net, *wl);
    const Time limit = apply_window(net, measure, time_limit);
    check_bounded(net, *wl, work.kind, limit);
    const auto t0 = std::chrono::steady_clock::now();
    wl->start(net);
    net.run(limit > 0 ? limit : kForever);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    net.finish_statistics();
    const int nodes = work.nodes > 0 ? work.nodes : net.nodes();
    Results r = collect(net, *wl, nodes, wall);
    r.workload = work.kind;
    r.setup_s = std::chrono::duration<double>(t0 - setup_start).count();
    r.peak_rss_bytes = peak_rss_bytes();
    r.rss_per_node_bytes = static_cast<double>(r.peak_rss_bytes) / net.nodes();
    return r;
}

}  // namespace sansim
