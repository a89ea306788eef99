// Turns the network's counters into per-node rates, distributions and utilizations.
#include "report/results.hpp"

#include <algorithm>

namespace sansim {
namespace {

Distribution distribution(const Histogram &h) {
    Distribution d;
    d.count = h.count();
    d.min_us = to_us(h.min());
    d.mean_us = h.mean() / kUs;
    d.p50_us = to_us(h.percentile(0.50));
    d.p90_us = to_us(h.percentile(0.90));
    d.p99_us = to_us(h.percentile(0.99));
    d.max_us = to_us(h.max());
    return d;
}

}  // namespace

Results collect(const Network &net, const Workload &work, int nodes, double wall_s) {
    const NetworkStats &s = net.stats();
    const Topology &topo = net.topology();
    Results r;
    r.topology = topo.name;
    r.nodes = nodes;
    r.fabrics = topo.fabrics;
    r.restricted = work.messages() != nullptr && work.messages()->options().restricted;
    r.sim_time_us = to_us(net.now());
    r.wall_s = wall_s;
    r.events = s.events;
    r.events_per_s = wall_s > 0 ? static_cast<double>(s.events) / wall_s : 0;
    r.packets = s.packets_sent;
    r.payload_injected = s.payload_injected;
    r.payload_delivered = s.payload_delivered;
    r.duplicates = s.duplicate_deliveries;
    r.deadlock = net.deadlocked();
    r.complete = work.finished() && !r.deadlock;
    r.packet_rtt = distribution(s.packet_rtt);
    r.transfer_latency = distribution(s.transfer_latency);
    if (work.messages() != nullptr) r.message_latency = distribution(work.messages()->latency());

    // Rates over the time traffic flowed (first injection to the end of the run).
    const Time begin = std::max<Time>(0, s.first_injection);
    const double secs = to_seconds(std::max<Time>(1, net.now() - begin));
    const double run_secs = to_seconds(std::max<Time>(1, net.now()));
    r.min_bidir_mbps = 1e300;
    for (int n = 0; n < nodes; ++n) {
        const Nic &nic = net.nics()[static_cast<std::size_t>(n)];
        NodeResult nr;
        nr.node = n;
        nr.tx_mbps = static_cast<double>(nic.tx_payload) / secs / 1e6;
        nr.rx_mbps = static_cast<double>(nic.rx_payload) / secs / 1e6;
        nr.bidir_mbps = (nr.tx_mbps + nr.rx_mbps) / 2;
        nr.or_exhausted_fraction = to_seconds(nic.exhausted_total) / run_secs;
        nr.pci_utilization = to_seconds(std::min(nic.pci_busy, net.now())) / run_secs;
        r.mean_tx_mbps += nr.tx_mbps / nodes;
        r.mean_rx_mbps += nr.rx_mbps / nodes;
        r.mean_bidir_mbps += nr.bidir_mbps / nodes;
        r.mean_or_exhausted += nr.or_exhausted_fraction / nodes;
        r.aggregate_mbps += nr.rx_mbps;
        r.min_bidir_mbps = std::min(r.min_bidir_mbps, nr.bidir_mbps);
        r.max_bidir_mbps = std::max(r.max_bidir_mbps, nr.bidir_mbps);
        r.per_node.push_back(nr);
    }
    if (nodes == 0) r.min_bidir_mbps = 0;
    for (std::size_t i = 0; i < net.channels().size(); ++i) {
        const Channel &ch = net.channels()[i];
        const ChannelEnds &ends = net.channel_ends()[i];
        LinkResult l;
        l.from = topo.dev_name(ends.from_dev) + "." + std::to_string(ends.from_port);
        l.to = topo.dev_name(ends.to_dev) + "." + std::to_string(ends.to_port);
        l.utilization = to_seconds(ch.busy_total) / run_secs;
        l.packets = ch.packets;
        l.router_port = !topo.is_node(ends.from_dev);
        r.links.push_back(l);
    }
    double hops = 0;
    int pairs = 0;
    for (int a = 0; a < nodes; ++a)
        for (int b = 0; b < nodes; ++b)
            if (a != b) {
                hops += net.routing().hop_count(net.choose_fabric(a, b), a, b);
                ++pairs;
            }
    r.mean_hops = pairs ? hops / pairs : 0;
    for (const auto &[lo, count] : s.packet_rtt.buckets()) r.rtt_histogram.emplace_back(to_us(lo), count);
    r.series_bin_us = to_us(s.series_bin);
    for (Time t : s.or_series)
        r.or_series.push_back(static_cast<double>(t) / static_cast<double>(s.series_bin) /
                              std::max(1, nodes));
    return r;
}

}  // namespace sansim
