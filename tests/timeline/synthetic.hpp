// A synthetic job for the timeline's tests: N nodes sampled ten times a second through a
// three-phase sort's phases (1, 2, 3a, 3b), node 2 slowed in phase 3b by another process
// taking its CPUs (a needle), every counter cumulative as the sampler reads them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "viaduct/counters.hpp"
#include "viaduct/timeline.hpp"

namespace timeline_test {

// What one node does in one phase, per second: CPUs of this process (user, system) and of
// others, iowait CPUs, disk MB/s read and written, network MB/s each way.
struct Load {
    double user, sys, other, iowait, read_mb, write_mb, net_mb;
};

inline Load load_of(uint32_t phase, bool needle) {
    switch (phase) {
        case 0:
            return {1.1, 0.5, 0.1, 0.2, 95, 10, 80};  // read and distribute
        case 1:
            return {2.6, 0.3, 0.1, 0.0, 5, 60, 0};  // sort the runs
        case 2:
            return {0.9, 0.4, 0.1, 0.4, 70, 70, 0};  // 3a: merge passes
        default:                                     // 3b: the final merge
            return needle ? Load{0.8, 0.2, 2.4, 0.1, 45, 45, 0}
                          : Load{1.4, 0.4, 0.1, 0.3, 85, 85, 0};
    }
}

// A deterministic wobble in [0.75, 1.25): bursts without a random generator's state.
inline double wobble(int node, int i, int which) {
    const double x = std::sin(0.37 * i + 1.7 * node + 2.3 * which) * 43758.5453;
    return 0.75 + 0.5 * (x - std::floor(x));
}

// The samples of node `node`: `per_node` samples, the phases in equal shares, the needle's
// node 40 samples longer in phase 3b.
inline std::vector<viaduct::CounterSample> node_samples(int node, int per_node) {
    const int64_t start_us = 1700000000000000 + node * 1237;  // the nodes' clocks never agree
    const bool needle = node == 2;
    const int count = per_node + (needle ? 40 : 0), quarter = per_node / 4;
    const uint32_t cpus = 4;
    std::vector<viaduct::CounterSample> out;
    viaduct::CounterSample s;
    s.cpus = cpus;
    s.rss_bytes = 200000000;
    for (int i = 0; i < count; ++i) {
        if (i > 0) {
            s.time_us += 100000;
            const Load l = load_of(s.phase, needle);
            const auto us = [&](double cpus_busy, int which) {
                return static_cast<uint64_t>(cpus_busy * wobble(node, i, which) * 1e5);
            };
            const auto bytes = [&](double mb, int which) {
                return static_cast<uint64_t>(mb * wobble(node, i, which) * 1e5);
            };
            const uint64_t user = us(l.user, 1), sys = us(l.sys, 2), other = us(l.other, 3);
            const uint64_t iowait = us(l.iowait, 4), total = cpus * 100000;
            s.proc_user_us += user;
            s.proc_sys_us += sys;
            s.host_user_us += user + other;
            s.host_sys_us += sys;
            s.host_iowait_us += iowait;
            s.host_idle_us +=
                total > user + sys + other + iowait ? total - user - sys - other - iowait : 0;
            s.proc_read_bytes += bytes(l.read_mb, 5);
            s.proc_write_bytes += bytes(l.write_mb, 6);
            s.dev_read_bytes += bytes(l.read_mb * 1.02, 5);
            s.dev_write_bytes += bytes(l.write_mb * 1.05, 6);
            s.dev_busy_us +=
                static_cast<uint64_t>(std::min(1.0, (l.read_mb + l.write_mb) / 150) * 1e5);
            s.dev_in_flight =
                static_cast<uint32_t>((l.read_mb + l.write_mb) / 20 * wobble(node, i, 7));
            s.net_sent_bytes += bytes(l.net_mb, 8);
            s.net_received_bytes += bytes(l.net_mb, 9);
            s.minor_faults += static_cast<uint64_t>(300 * wobble(node, i, 10));
            s.major_faults += needle && s.phase == 3 ? 4 : 0;
            s.rss_bytes = 200000000 + static_cast<uint64_t>(i) * 1500000;
            s.records += 100000;
            s.bytes += 10000000;
        } else {
            s.time_us = start_us;
        }
        s.phase = static_cast<uint32_t>(std::min(3, i / std::max(1, quarter)));
        out.push_back(s);
    }
    return out;
}

// The job: `nodes` nodes named host-N (or `odd_host` for node 1 when given), with a needle
// line and a report.
inline viaduct::timeline::Input synthetic_input(int nodes, int per_node = 240,
                                                const std::string &odd_host = "") {
    viaduct::timeline::Input in;
    in.title = "sortapp run: " + std::to_string(nodes) + " nodes, three-phase, synthetic";
    in.phase_names = {"1", "2", "3a", "3b"};
    for (int n = 0; n < nodes; ++n)
        in.nodes.push_back({n, n == 1 && !odd_host.empty() ? odd_host : "host-" + std::to_string(n),
                            node_samples(n, per_node)});
    if (nodes > 2)
        in.needles.push_back(
            "needle: node 2, phase 3b, 1.41x the median: other processes took 60% of its CPUs");
    in.report = "sortapp run (synthetic)\nnodes: " + std::to_string(nodes) +
                "\nphase 3b: node 2 slowest\n" +
                (odd_host.empty() ? "" : "odd host: " + odd_host + "\n");
    return in;
}

}  // namespace timeline_test
