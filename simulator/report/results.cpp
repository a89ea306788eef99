// Turns the network's counters into per-node rates, distributions and utilizations, over the
// measurement window when one was given and over the run otherwise.
#include "report/results.hpp"

#include <algorithm>
#include <cmath>

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

// What rates are measured over: the window, or the run from its first injection.
struct Span {
    Time begin = 0, end = 0;
    double secs() const { return to_seconds(std::max<Time>(1, end - begin)); }
};

Span measured_span(const Network &net) {
    const Window &w = net.window();
    Span s;
    s.begin = std::max<Time>(w.begin, std::max<Time>(0, net.stats().first_injection));
    s.end = std::min(w.end, net.now());
    if (s.end < s.begin) s.end = s.begin;
    return s;
}

// Busy times over the window (from its snapshots) or over the whole run.
struct Busy {
    std::vector<Time> channel, exhausted, pci;
    double secs = 0;
};

Busy busy_times(const Network &net) {
    Busy b;
    const NetworkStats &s = net.stats();
    if (!net.window().given) {
        for (std::size_t i = 0; i < net.link_channels(); ++i)
            b.channel.push_back(net.link_channel(i).busy_total);
        for (const Nic &nic : net.nics()) {
            b.exhausted.push_back(nic.stats().exhausted_total);
            b.pci.push_back(std::min(nic.stats().pci_busy, net.now()));
        }
        b.secs = to_seconds(std::max<Time>(1, net.now()));
        return b;
    }
    const Snapshot stop = s.window_stop.taken ? s.window_stop : net.snapshot();
    Snapshot start = s.window_start;
    if (!start.taken) start = stop;  // the run ended before the window began
    auto diff = [](const std::vector<Time> &a, const std::vector<Time> &z) {
        std::vector<Time> d(z.size());
        for (std::size_t i = 0; i < z.size(); ++i) d[i] = z[i] - a[i];
        return d;
    };
    b.channel = diff(start.channel_busy, stop.channel_busy);
    b.exhausted = diff(start.nic_exhausted, stop.nic_exhausted);
    b.pci = diff(start.nic_pci, stop.nic_pci);
    b.secs = to_seconds(std::max<Time>(1, stop.at - start.at));
    return b;
}

void fill_lanes(Results &r, const Network &net) {
    const Params &p = net.params();
    const Topology &t = net.topology();
    r.flow_control = flow_control_name(p.flow_control);
    r.vl_rule = t.vl_rule;
    r.routing = t.routing;
    r.vls = p.vls;
    r.lane_buffer_bytes = p.vl_buffer_bytes > 0 ? p.vl_buffer_bytes : p.fifo_bytes;
    r.buffer_overflows = net.stats().buffer_overflows;
    r.peak_buffer_bytes = net.stats().peak_buffer_bytes;
    r.lanes_reported = p.flow_control != FlowControl::packet || p.vls > 1 || t.vl_rule != "none" ||
                       t.routing == "valiant";
}

void fill_run(Results &r, const Network &net, const Workload &work, double wall_s) {
    const NetworkStats &s = net.stats();
    r.topology = net.topology().name;
    r.fabrics = net.topology().fabrics;
    r.restricted = work.messages() != nullptr && work.messages()->options().restricted;
    r.sim_time_us = to_us(net.now());
    r.wall_s = wall_s;
    r.events = s.events;
    r.events_per_s = wall_s > 0 ? static_cast<double>(s.events) / wall_s : 0;
    r.packets = s.packets_sent;
    r.payload_injected = s.payload_injected;
    r.payload_delivered = s.payload_delivered;
    r.duplicates = s.duplicate_deliveries;
    r.stalled = net.stalled();
    r.deadlock = net.deadlocked();
    r.stall_us = net.stall_time() == kForever ? 0 : to_us(net.stall_time());
    if (r.stalled) r.stalled_at_us = r.sim_time_us;
    r.transfers_pending = net.live_transfers();
    r.open_loop = work.open_loop();
    r.offered_load = work.offered_load();
    r.replayed = work.replay_summary(&r.replay);
    r.acks = ack_path_name(net.params().acks);
    r.pci_mbps = net.params().pci_mbps;
    r.uses_messages = work.messages() != nullptr;
    fill_lanes(r, net);
    const Window &w = net.window();
    r.window_given = w.given;
    r.window_transfers = s.window_transfers;
    r.window_undrained = s.window_live;
    const bool drained = w.given && net.now() >= w.end && s.window_live == 0;
    const bool finished = work.finished() && net.live_transfers() == 0;
    r.complete = !r.stalled && !r.deadlock && (finished || drained);
    r.packet_rtt = distribution(s.packet_rtt);
    r.request_rtt = distribution(s.request_rtt);
    r.transfer_latency = distribution(s.transfer_latency);
    if (work.messages() != nullptr) r.message_latency = distribution(work.messages()->latency());
    if (r.request_rtt.count > 0)
        r.request_limited_mbps =
            net.params().outstanding_limit * net.params().max_payload / r.request_rtt.mean_us;
}

// The value below which a share q of the sorted values fall (nearest rank).
double quantile(const std::vector<double> &sorted, double q) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank > 0 ? rank - 1 : 0)];
}

NodeResult node_result(const Network &net, int n, const Span &span, const Busy &busy) {
    const NicStats &nic = net.nics()[static_cast<std::size_t>(n)].stats();
    NodeResult nr;
    nr.node = n;
    nr.active = nic.tx_window > 0 || nic.rx_window > 0;
    auto own_rate = [&](std::uint64_t bytes, Time last) {
        if (bytes == 0) return 0.0;
        return static_cast<double>(bytes) / to_seconds(std::max<Time>(1, last - span.begin)) / 1e6;
    };
    nr.tx_mbps = own_rate(nic.tx_window, nic.last_tx);
    nr.rx_mbps = own_rate(nic.rx_window, nic.last_rx);
    nr.bidir_mbps = (nr.tx_mbps + nr.rx_mbps) / 2;
    nr.or_exhausted_fraction = to_seconds(busy.exhausted[static_cast<std::size_t>(n)]) / busy.secs;
    nr.pci_utilization = to_seconds(busy.pci[static_cast<std::size_t>(n)]) / busy.secs;
    nr.latency_p50_us = to_us(nic.latency.percentile(0.50));
    nr.latency_p99_us = to_us(nic.latency.percentile(0.99));
    return nr;
}

// Means over the span for the active nodes, the spread of their own rates, and the share of
// the senders' injection capacity the network delivered.
void fill_nodes(Results &r, const Network &net, int nodes, const Span &span, const Busy &busy) {
    const double secs = span.secs();
    double capacity = 0;
    for (int n = 0; n < nodes; ++n) {
        const NicStats &nic = net.nics()[static_cast<std::size_t>(n)].stats();
        r.senders += nic.tx_window > 0;
        r.receivers += nic.rx_window > 0;
        r.active_nodes += nic.tx_window > 0 || nic.rx_window > 0;
        if (nic.tx_window > 0) capacity += net.injection_capacity_mbps(n);
    }
    std::vector<double> bidir;
    for (int n = 0; n < nodes; ++n) {
        const NicStats &nic = net.nics()[static_cast<std::size_t>(n)].stats();
        r.per_node.push_back(node_result(net, n, span, busy));
        const NodeResult &nr = r.per_node.back();
        if (!nr.active) continue;
        const double tx = static_cast<double>(nic.tx_window) / secs / 1e6;
        const double rx = static_cast<double>(nic.rx_window) / secs / 1e6;
        if (tx > 0) r.mean_tx_mbps += tx / r.senders;
        if (rx > 0) r.mean_rx_mbps += rx / r.receivers;
        r.mean_bidir_mbps += (tx + rx) / 2 / r.active_nodes;
        r.mean_or_exhausted += nr.or_exhausted_fraction / r.active_nodes;
        r.aggregate_mbps += rx;
        bidir.push_back(nr.bidir_mbps);
    }
    std::sort(bidir.begin(), bidir.end());
    r.min_bidir_mbps = bidir.empty() ? 0 : bidir.front();
    r.max_bidir_mbps = bidir.empty() ? 0 : bidir.back();
    r.p50_bidir_mbps = quantile(bidir, 0.50);
    r.p99_bidir_mbps = quantile(bidir, 0.99);
    r.capacity_mbps =
        r.senders > 0 ? capacity / r.senders : (nodes > 0 ? net.injection_capacity_mbps(0) : 0);
    r.throughput_fraction = capacity > 0 ? r.aggregate_mbps / capacity : 0;
    const double injected_mbps =
        static_cast<double>(net.stats().payload_injected_window) / span.secs() / 1e6;
    r.injected_fraction = capacity > 0 ? injected_mbps / capacity : 0;
}

std::string fabric_name(int f) {
    if (f == 0) return "X";
    if (f == 1) return "Y";
    return "F" + std::to_string(f);
}

// A link direction's name, fabric and kind. The fabric is its router's: every generator wires
// a node's port p to fabric p, but a topology file need not.
void name_link(LinkResult &l, const Topology &topo, const ChannelEnds &e) {
    const bool from_node = topo.is_node(e.from_dev), to_node = topo.is_node(e.to_dev);
    // A node's port shows in the router's name and the fabric; it is named only between NICs.
    auto end_name = [&](int dev, int port) {
        const bool bare = topo.is_node(dev) && !(from_node && to_node);
        return topo.dev_name(dev) + (bare ? std::string() : ".p" + std::to_string(port));
    };
    l.name = end_name(e.from_dev, e.from_port) + "->" + end_name(e.to_dev, e.to_port);
    const int router = !from_node ? e.from_dev : !to_node ? e.to_dev : -1;
    const int fabric = router >= 0
                           ? topo.routers[static_cast<std::size_t>(router - topo.nodes)].fabric
                           : e.from_port;
    l.fabric = fabric_name(fabric);
    l.kind = std::string(from_node ? "node" : "switch") + "->" + (to_node ? "node" : "switch");
}

void fill_links(Results &r, const Network &net, const Busy &busy) {
    const Topology &topo = net.topology();
    for (std::size_t i = 0; i < net.link_channels(); ++i) {
        const Channel &ch = net.link_channel(i);
        const ChannelEnds &ends = net.channel_ends()[i];
        LinkResult l;
        l.from = topo.dev_name(ends.from_dev) + "." + std::to_string(ends.from_port);
        l.to = topo.dev_name(ends.to_dev) + "." + std::to_string(ends.to_port);
        name_link(l, topo, ends);
        l.utilization = to_seconds(busy.channel[i]) / busy.secs;
        l.packets = ch.packets;
        l.router_port = !topo.is_node(ends.from_dev);
        r.links.push_back(l);
    }
}

// A one-packet write of `bytes` over `hops` routers with nothing else in the network: the
// BTE's PCI read, the request's wire time, and unless acknowledgements are dropped, the AVT's
// PCI write and the response's (the same on the separate path).
double zero_load_us(const Params &p, std::uint64_t bytes, int hops) {
    const double mbps = p.link_mbps > 0 ? p.link_mbps : p.symbol_mhz;
    const double ns_per_byte = 1e3 / mbps;
    auto wire_ns = [&](double length) {
        return length * ns_per_byte + (hops + 1) * p.link_delay_ns + hops * p.hop_latency_ns;
    };
    const double data_ns = p.pci_mbps > 0 ? static_cast<double>(bytes) * 1e3 / p.pci_mbps : 0;
    double ns = wire_ns(static_cast<double>(bytes) + p.header_bytes);
    if (p.pci_mbps > 0) ns += p.pci_read_latency_ns + data_ns;
    if (p.acks != AckPath::none) {
        ns += wire_ns(p.header_bytes) + p.nic_turnaround_ns;
        if (p.pci_mbps > 0) ns += p.pci_write_overhead_ns + data_ns;
    }
    return ns / 1e3;
}

// Mean hops and zero-load latency over the pairs that carried traffic.
void fill_hops(Results &r, const Network &net, const Workload &work, int nodes) {
    const std::uint64_t bytes = work.transfer_bytes();
    const bool one_packet =
        bytes > 0 && bytes <= static_cast<std::uint64_t>(net.params().max_payload);
    double hops = 0, zero_load = 0;
    int pairs = 0;
    for (const auto &[a, b] : net.used_pairs()) {
        if (a >= nodes || b >= nodes) continue;
        const int h = net.routing().hop_count(net.choose_fabric(a, b), a, b);
        hops += h;
        if (one_packet) zero_load += zero_load_us(net.params(), bytes, h);
        ++pairs;
    }
    r.mean_hops = pairs ? hops / pairs : 0;
    r.zero_load_latency_us = pairs ? zero_load / pairs : 0;
}

// Steady state: the span's halves deliver at the same rate, their transfers see the same mean
// latency, and next to all of them finished; each within the tolerance.
void fill_steady(Results &r, const Network &net, const Span &span) {
    r.steady_tolerance = net.params().steady_tolerance;
    const TimeSeries &ts = net.stats().series;
    const Time mid = span.begin + (span.end - span.begin) / 2;
    const TimeSeries::Totals a = ts.sum(span.begin, mid), b = ts.sum(mid, span.end);
    if (a.to <= a.from || b.to <= b.from || a.bytes <= 0 || a.injected == 0 || b.injected == 0)
        return;  // too short, or a half measured nothing: unknown
    r.steady_known = true;
    const double rate_a = a.bytes / static_cast<double>(a.to - a.from);
    const double rate_b = b.bytes / static_cast<double>(b.to - b.from);
    r.throughput_drift = (rate_b - rate_a) / rate_a;
    auto unfinished = [](const TimeSeries::Totals &t) {
        return 1.0 - static_cast<double>(t.latency_count) / static_cast<double>(t.injected);
    };
    r.unfinished = std::max(unfinished(a), unfinished(b));
    const bool latency_known = a.latency_count > 0 && b.latency_count > 0;
    r.latency_drift = std::nan("");
    if (latency_known) {
        const double lat_a = a.latency_sum / static_cast<double>(a.latency_count);
        const double lat_b = b.latency_sum / static_cast<double>(b.latency_count);
        r.latency_drift = (lat_b - lat_a) / lat_a;
    }
    const double tol = r.steady_tolerance;
    r.steady = std::abs(r.throughput_drift) <= tol && latency_known &&
               std::abs(r.latency_drift) <= tol && r.unfinished <= tol;
}

}  // namespace

Results collect(const Network &net, const Workload &work, int nodes, double wall_s) {
    const NetworkStats &s = net.stats();
    Results r;
    r.nodes = nodes;
    fill_run(r, net, work, wall_s);
    const Span span = measured_span(net);
    r.span_begin_us = to_us(span.begin);
    r.span_end_us = to_us(span.end);
    const Busy busy = busy_times(net);
    fill_nodes(r, net, nodes, span, busy);
    fill_links(r, net, busy);
    fill_hops(r, net, work, nodes);
    fill_steady(r, net, span);
    for (const Histogram::Bucket &b : s.packet_rtt.buckets())
        r.rtt_histogram.push_back({to_us(b.lower), to_us(b.width), b.count});
    r.series_bin_us = to_us(s.series_bin);
    for (Time t : s.or_series)
        r.or_series.push_back(static_cast<double>(t) / static_cast<double>(s.series_bin) /
                              std::max(1, nodes));
    return r;
}

}  // namespace sansim
