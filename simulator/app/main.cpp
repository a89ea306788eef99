// sansim: the command line. Runs one simulation or a sweep over node counts and protocols, as
// app/options.cpp parsed them, and prints text or JSON (CSV files and plots on request).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app/options.hpp"
#include "app/run.hpp"
#include "app/sweep_progress.hpp"

namespace {

using namespace sansim;

// The long-message modes to run: false = unrestricted, true = restricted.
std::vector<bool> protocol_modes(const std::string &protocol) {
    std::vector<bool> modes;
    if (protocol != "restricted") modes.push_back(false);
    if (protocol != "unrestricted") modes.push_back(true);
    return modes;
}

std::vector<int> sweep_counts(const std::string &sweep, const Topology &topo) {
    std::vector<int> counts;
    if (sweep.empty()) return counts;
    std::stringstream ss(sweep);
    for (std::string item; std::getline(ss, item, ',');)
        counts.push_back(static_cast<int>(to_long("--sweep-nodes", item, 2, topo.nodes)));
    return counts;
}

// A sweep's progress line (runs done, the pace) belongs to a person at a terminal.
bool show_progress(const CommandLine &cl) {
    return !cl.json && !cl.quiet;
}

int run_once(const Topology &topo, CommandLine &cl, bool restricted, Time limit) {
    cl.workload.messages.restricted = restricted;
    const Results r = run_simulation(topo, cl.params, cl.workload, limit, cl.measure);
    std::cout << (cl.json ? to_json(r, true) : to_text(r));
    if (!cl.csv_dir.empty()) write_csv(r, cl.csv_dir);
    if (!cl.plot_dir.empty()) {
        const std::string err = plot_run(r, cl.plot_dir);
        if (!err.empty()) die(err);
    }
    return r.deadlock || r.stalled ? 3 : 0;
}

void print_sweep_row(const Results &r, int n, bool restricted) {
    std::printf(
        "nodes %3d  %-12s  bidirectional %7.2f MB/s/node  (tx %6.2f rx %6.2f)"
        "  OR-exhausted %5.1f%%  RTT mean %7.2f us  sim %.0f us  wall %.2f s\n",
        n, restricted ? "restricted" : "unrestricted", r.mean_bidir_mbps, r.mean_tx_mbps,
        r.mean_rx_mbps, 100 * r.mean_or_exhausted, r.packet_rtt.mean_us, r.sim_time_us, r.wall_s);
}

// One run per node count and mode; a line each as it ends (text), or one JSON document.
int run_sweep(const Topology &topo, CommandLine &cl, const std::vector<int> &counts,
              const std::vector<bool> &modes, Time limit) {
    std::vector<Results> rows;
    bool deadlock = false;
    SweepProgress progress(counts.size() * modes.size(), show_progress(cl));
    for (int n : counts)
        for (bool restricted : modes) {
            cl.workload.nodes = n;
            cl.workload.messages.restricted = restricted;
            rows.push_back(run_simulation(topo, cl.params, cl.workload, limit, cl.measure));
            deadlock |= rows.back().deadlock || rows.back().stalled;
            progress.finish();
            if (!cl.json) print_sweep_row(rows.back(), n, restricted);
            std::fflush(stdout);
            progress.update(rows.size());
        }
    progress.finish();
    if (cl.json) std::cout << sweep_json(rows);
    if (!cl.csv_dir.empty()) write_sweep_csv(rows, cl.csv_dir + "/sweep.csv");
    if (!cl.plot_dir.empty()) {
        const std::string err = plot_sweep(rows, cl.plot_dir);
        if (!err.empty()) die(err);
    }
    return deadlock ? 3 : 0;
}

std::vector<double> sweep_loads(const std::string &list) {
    std::vector<double> loads;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');) {
        double load = 0;
        try {
            std::size_t used = 0;
            load = std::stod(item, &used);
            if (used != item.size()) load = 0;
        } catch (const std::exception &) {
        }
        if (!(load > 0 && load <= 100))
            usage_die("--sweep-load: '" + item + "' is not a load in (0, 100]");
        loads.push_back(load);
    }
    return loads;
}

// One open-loop run per offered load: the latency-versus-load table and the saturation point.
int run_load_sweep(const Topology &topo, CommandLine &cl, Time limit) {
    std::vector<Results> rows;
    bool stopped = false;
    const std::vector<double> loads = sweep_loads(cl.sweep_load);
    SweepProgress progress(loads.size(), show_progress(cl));
    for (double load : loads) {
        cl.workload.load = load;
        rows.push_back(run_simulation(topo, cl.params, cl.workload, limit, cl.measure));
        stopped |= rows.back().deadlock || rows.back().stalled;
        progress.update(rows.size());
    }
    progress.finish();
    std::cout << (cl.json ? load_sweep_json(rows) : load_sweep_text(rows));
    if (!cl.csv_dir.empty()) write_load_sweep_csv(rows, cl.csv_dir + "/load_sweep.csv");
    if (!cl.plot_dir.empty()) {
        const std::string err = plot_load_sweep(rows, cl.plot_dir);
        if (!err.empty()) die(err);
    }
    return stopped ? 3 : 0;
}

// Exit status: 0, or 3 when a run deadlocked or stalled.
int simulate(CommandLine &cl) {
    Topology topo = make_topology(cl.topology, cl.fabrics);
    apply_topology_settings(topo, cl);
    check_routing_footprint(cl.topology, topo);
    // At least a picosecond: a limit that rounds to 0 would mean none.
    const Time limit = cl.time_limit_us > 0 ? std::max<Time>(1, from_us(cl.time_limit_us)) : 0;
    const std::vector<bool> modes = protocol_modes(cl.protocol);

    for (const std::string &dir : {cl.csv_dir, cl.plot_dir})
        if (!dir.empty()) std::filesystem::create_directories(dir);

    if (!cl.sweep_load.empty()) return run_load_sweep(topo, cl, limit);
    std::vector<int> counts = sweep_counts(cl.sweep, topo);
    if (counts.empty() && modes.size() == 1) return run_once(topo, cl, modes[0], limit);
    // Both protocols without a sweep: one node count, two rows.
    if (counts.empty()) counts.push_back(cl.workload.nodes > 0 ? cl.workload.nodes : topo.nodes);
    return run_sweep(topo, cl, counts, modes, limit);
}

}  // namespace

int main(int argc, char **argv) {
    CommandLine cl = parse_command_line(argc, argv);
    try {
        return simulate(cl);
    } catch (const std::exception &e) {  // TopologyError among them
        die(e.what());
    }
}
