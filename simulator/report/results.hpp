// What a run produced, gathered from the network and the workload, and its renderings:
// text summary, JSON, CSV files and gnuplot PNGs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/network.hpp"
#include "traffic/workload.hpp"

namespace sansim {

struct Distribution {
    std::uint64_t count = 0;
    double min_us = 0, mean_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0;
};

struct NodeResult {
    int node = 0;
    double tx_mbps = 0, rx_mbps = 0, bidir_mbps = 0;
    double or_exhausted_fraction = 0;
    double pci_utilization = 0;
};

struct LinkResult {
    std::string from, to;
    double utilization = 0;
    std::uint64_t packets = 0;
    bool router_port = false;  // leaves a router (a router output port)
};

struct Results {
    std::string topology, workload;
    int nodes = 0;       // nodes the workload used
    int fabrics = 1;
    bool restricted = false;
    double sim_time_us = 0, wall_s = 0;
    std::uint64_t events = 0;
    double events_per_s = 0;
    std::uint64_t packets = 0, payload_injected = 0, payload_delivered = 0, duplicates = 0;
    bool deadlock = false, complete = true;
    double mean_tx_mbps = 0, mean_rx_mbps = 0, mean_bidir_mbps = 0, min_bidir_mbps = 0,
           max_bidir_mbps = 0, aggregate_mbps = 0;
    double mean_or_exhausted = 0;
    double mean_hops = 0;
    Distribution packet_rtt, message_latency, transfer_latency;
    std::vector<NodeResult> per_node;
    std::vector<LinkResult> links;
    std::vector<std::pair<double, std::uint64_t>> rtt_histogram;  // (bucket lower us, count)
    std::vector<double> or_series;  // fraction of NIC time exhausted per bin
    double series_bin_us = 0;
};

Results collect(const Network &net, const Workload &work, int nodes, double wall_s);

std::string to_text(const Results &r);
std::string to_json(const Results &r, bool full);
std::string sweep_json(const std::vector<Results> &rows);
// Writes nodes.csv, links.csv, rtt_histogram.csv and or_series.csv into `dir`.
void write_csv(const Results &r, const std::string &dir);
void write_sweep_csv(const std::vector<Results> &rows, const std::string &path);
// PNGs through gnuplot; returns an error message, empty on success.
std::string plot_run(const Results &r, const std::string &dir);
std::string plot_sweep(const std::vector<Results> &rows, const std::string &dir);

}  // namespace sansim
