// What a run produced, gathered from the network and the workload, and its renderings:
// text summary, JSON, CSV files and gnuplot PNGs.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "model/network.hpp"
#include "traffic/workload.hpp"

namespace sansim {

struct Distribution {
    std::uint64_t count = 0;
    double min_us = 0, mean_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0;
};

// A node's rates are over its own active time: from the start of measurement to its last
// delivery sent (tx) or received (rx) inside the window.
struct NodeResult {
    int node = 0;
    bool active = false;  // sent or received payload in the window
    double tx_mbps = 0, rx_mbps = 0, bidir_mbps = 0;
    double or_exhausted_fraction = 0;
    double pci_utilization = 0;
    double latency_p50_us = 0, latency_p99_us = 0;  // transfers it initiated
};

// One direction of a link. from/to are "device.port"; name is the direction as a reader
// says it ("xp3.p2->n12": router xp3's port 2 to node 12), fabric the fabric it belongs to
// ("X", "Y", ...: a node's port p is fabric p), kind one of "node->switch", "switch->node",
// "switch->switch" ("node->node" for a cable between two NICs).
struct LinkResult {
    std::string from, to, name, fabric, kind;
    double utilization = 0;
    std::uint64_t packets = 0;
    bool router_port = false;  // leaves a router (a router output port)
};

// A packet RTT histogram bucket: [lower_us, lower_us + width_us) held count packets.
struct RttBucket {
    double lower_us = 0, width_us = 0;
    std::uint64_t count = 0;
    double density() const { return static_cast<double>(count) / width_us; }  // packets per us
};

struct Results {
    std::string topology, workload;
    int nodes = 0;  // nodes the workload used
    int fabrics = 1;
    bool restricted = false;
    double sim_time_us = 0, wall_s = 0;
    std::uint64_t events = 0;
    double events_per_s = 0;
    // Building the network (routing included) and the workload, before the event loop; the
    // process's peak resident memory so far, and that over the topology's nodes.
    double setup_s = 0;
    std::uint64_t peak_rss_bytes = 0;
    double rss_per_node_bytes = 0;
    std::uint64_t packets = 0, payload_injected = 0, payload_delivered = 0, duplicates = 0;
    // complete: every transfer the run counts (with a window, those queued in it) was
    // delivered. stalled: no progress for stall_us with work pending, and the run stopped;
    // deadlock: the queue drained, or the stall held packets in FIFOs with every link idle.
    bool deadlock = false, complete = true, stalled = false;
    double stall_us = 0, stalled_at_us = 0;
    std::uint64_t transfers_pending = 0;  // queued or in flight at the end
    bool open_loop = false;               // the workload never finishes by itself
    double offered_load = -1;             // open loop: fraction of injection capacity
    // Transfer latency with no other traffic, over the pairs that carried traffic, for
    // one-packet transfers (0 otherwise); at the default link figures.
    double zero_load_latency_us = 0;
    std::string acks;            // inband, separate or none
    double pci_mbps = 0;         // 0: ideal endpoints
    bool uses_messages = false;  // the workload sends messages (message latency applies)
    // Link-level flow control, reported when a run asks for credits, lanes, a lane rule or
    // Valiant routing (lanes_reported); overflows and the peak are counted under credits only.
    bool lanes_reported = false;
    std::string flow_control, vl_rule, routing;
    int vls = 1;
    int lane_buffer_bytes = 0;
    std::uint64_t buffer_overflows = 0;
    std::uint32_t peak_buffer_bytes = 0;

    // The span rates cover: the window (after --warmup, for --measure) or the run from the
    // first injection; the window's transfers and those still in flight at the end.
    bool window_given = false;
    double span_begin_us = 0, span_end_us = 0;
    std::uint64_t window_transfers = 0, window_undrained = 0;

    // The span's halves compared: throughput, mean latency of the transfers queued in each
    // (NaN when none of a half's finished), and the larger share of a half's transfers still
    // unfinished at the end. Unknown when a half delivered or queued nothing.
    bool steady = false, steady_known = false;
    double throughput_drift = 0, latency_drift = 0, unfinished = 0, steady_tolerance = 0;

    // Means over active nodes (tx over senders, rx over receivers) across the whole span;
    // min/p50/p99/max over active nodes, each over its own active time.
    double mean_tx_mbps = 0, mean_rx_mbps = 0, mean_bidir_mbps = 0, min_bidir_mbps = 0,
           max_bidir_mbps = 0, aggregate_mbps = 0;
    double p50_bidir_mbps = 0, p99_bidir_mbps = 0;
    int active_nodes = 0, senders = 0, receivers = 0;
    double capacity_mbps = 0;        // a sender's injection capacity (mean over senders)
    double throughput_fraction = 0;  // aggregate over the senders' injection capacity
    double injected_fraction = 0;    // what the window's transfers asked for, likewise
    double mean_or_exhausted = 0;
    double mean_hops = 0;  // over the pairs that carried traffic
    Distribution packet_rtt, message_latency, transfer_latency;
    // Outstanding-request slot held (BTE issue, its PCI read included, to response), and the
    // bandwidth it allows: limit * payload / mean.
    Distribution request_rtt;
    double request_limited_mbps = 0;
    std::vector<NodeResult> per_node;
    std::vector<LinkResult> links;
    std::vector<RttBucket> rtt_histogram;  // the non-empty buckets, in increasing order
    std::vector<double> or_series;         // fraction of NIC time exhausted per bin
    double series_bin_us = 0;
    bool replayed = false;  // a replayed trace: its summary
    ReplaySummary replay;
};

Results collect(const Network &net, const Workload &work, int nodes, double wall_s);

std::string to_text(const Results &r);
// Whether the run's figures mean what they seem to (report/verdict.cpp): empty when they do,
// else one line that says why not and what to change ("SATURATED: ...").
// One number in a printf format ("%.2f"), for the reports.
inline std::string fmt(const char *format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string verdict(const Results &r);
std::string to_json(const Results &r, bool full);
std::string sweep_json(const std::vector<Results> &rows);
// Every file sansim writes goes through here: written whole or not at all, never through a
// link someone planted, under the umask, published by rename and a directory fsync
// (viaduct::write_file_atomically). Throws std::runtime_error saying why otherwise.
void write_file(const std::string &path, const std::string &text);
// Writes nodes.csv, links.csv, rtt_histogram.csv and or_series.csv into `dir`.
void write_csv(const Results &r, const std::string &dir);
void write_sweep_csv(const std::vector<Results> &rows, const std::string &path);
// PNGs through gnuplot, each with its CSV data and its gnuplot script (<plot>.gp, runnable
// again with `cd DIR && gnuplot <plot>.gp`) beside it; returns an error message, empty on
// success.
std::string plot_run(const Results &r, const std::string &dir);
std::string plot_sweep(const std::vector<Results> &rows, const std::string &dir);

// A load sweep (report/load_sweep.cpp): one open-loop run per offered load.
struct Saturation {
    // Saturated: accepted fell below `threshold` of what the window injected (the offered load
    // as it came out of the random sources), or the run stalled.
    bool reached = false;
    double last_below = 0;    // the highest offered load still below saturation (0: none)
    double first_at = 0;      // the first offered load at or past it
    double max_accepted = 0;  // the highest accepted throughput, and where
    double max_accepted_at = 0;
    double threshold = 0.95;
};
Saturation find_saturation(const std::vector<Results> &rows, double threshold = 0.95);
std::string load_sweep_text(const std::vector<Results> &rows);
std::string load_sweep_json(const std::vector<Results> &rows);
void write_load_sweep_csv(const std::vector<Results> &rows, const std::string &path);
std::string plot_load_sweep(const std::vector<Results> &rows, const std::string &dir);

}  // namespace sansim
