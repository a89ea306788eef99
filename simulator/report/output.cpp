// Renderings of Results: a text summary, JSON (nlohmann/json), CSV files; and the one way
// sansim writes a file.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "report/results.hpp"
#include "viaduct/safe_file.hpp"

namespace sansim {
namespace {

nlohmann::json dist_json(const Distribution &d) {
    return {{"count", d.count},   {"min_us", d.min_us}, {"mean_us", d.mean_us},
            {"p50_us", d.p50_us}, {"p90_us", d.p90_us}, {"p99_us", d.p99_us},
            {"max_us", d.max_us}};
}

std::string dist_text(const char *name, const Distribution &d) {
    if (d.count == 0) return std::string(name) + ": none\n";
    return std::string(name) + " (us): min " + fmt("%.3f", d.min_us) + "  mean " +
           fmt("%.3f", d.mean_us) + "  p50 " + fmt("%.3f", d.p50_us) + "  p90 " +
           fmt("%.3f", d.p90_us) + "  p99 " + fmt("%.3f", d.p99_us) + "  max " +
           fmt("%.3f", d.max_us) + "  (" + std::to_string(d.count) + " samples)\n";
}

// What the run measured over and whether it settled: the window, stall and steady state.
nlohmann::json measurement_json(const Results &r) {
    nlohmann::json steady = {{"known", r.steady_known},
                             {"throughput", r.throughput_drift},
                             {"latency", r.latency_drift},
                             {"unfinished", r.unfinished},
                             {"tolerance", r.steady_tolerance}};
    return {{"window",
             {{"given", r.window_given},
              {"begin_us", r.span_begin_us},
              {"end_us", r.span_end_us},
              {"transfers", r.window_transfers},
              {"undrained", r.window_undrained}}},
            {"steady", r.steady},
            {"steady_drift", steady},
            {"stalled", r.stalled},
            {"stall_us", r.stall_us},
            {"transfers_pending", r.transfers_pending},
            {"injection_capacity_mbps", r.capacity_mbps},
            {"throughput_fraction", r.throughput_fraction},
            {"injected_fraction", r.injected_fraction},
            {"request_rtt", dist_json(r.request_rtt)},
            {"request_limited_mbps", r.request_limited_mbps},
            {"offered_load", r.offered_load},
            {"zero_load_latency_us", r.zero_load_latency_us},
            {"acks", r.acks},
            {"verdict", verdict(r)}};
}

// Predicted over recorded time (0 when nothing was recorded).
double replay_ratio(const Results &r) {
    return r.replay.recorded_us > 0 ? r.replay.predicted_us / r.replay.recorded_us : 0;
}

std::string replay_text(const Results &r) {
    if (!r.replayed) return "";
    std::string s =
        "replay: " + std::to_string(r.replay.ranks) + " ranks, " +
        std::to_string(r.replay.messages) + " messages, " + std::to_string(r.replay.bytes) +
        " B; recorded " + fmt("%.3f", r.replay.recorded_us) + " us, predicted " +
        fmt("%.3f", r.replay.predicted_us) + " us, ratio " + fmt("%.3f", replay_ratio(r)) + "\n";
    if (r.replay.unmatched_receives > 0 || r.replay.dropped > 0)
        s += "note: " + std::to_string(r.replay.unmatched_receives) +
             " receives matched no recorded send and " + std::to_string(r.replay.dropped) +
             " records were dropped by the traces' cap: the prediction misses them\n";
    return s;
}

nlohmann::json summary_json(const Results &r) {
    nlohmann::json j = {
        {"topology", r.topology},
        {"workload", r.workload},
        {"nodes", r.nodes},
        {"fabrics", r.fabrics},
        {"protocol", r.restricted ? "restricted" : "unrestricted"},
        {"complete", r.complete},
        {"deadlock", r.deadlock},
        {"sim_time_us", r.sim_time_us},
        {"wall_s", r.wall_s},
        {"events", r.events},
        {"events_per_s", r.events_per_s},
        {"setup_s", r.setup_s},
        {"peak_rss_bytes", r.peak_rss_bytes},
        {"rss_per_node_bytes", r.rss_per_node_bytes},
        {"packets", r.packets},
        {"payload_injected", r.payload_injected},
        {"payload_delivered", r.payload_delivered},
        {"duplicate_deliveries", r.duplicates},
        {"mean_hops", r.mean_hops},
        {"throughput_mbps",
         {{"tx_mean", r.mean_tx_mbps},
          {"rx_mean", r.mean_rx_mbps},
          {"bidir_mean", r.mean_bidir_mbps},
          {"bidir_min", r.min_bidir_mbps},
          {"bidir_max", r.max_bidir_mbps},
          {"bidir_p50", r.p50_bidir_mbps},
          {"bidir_p99", r.p99_bidir_mbps},
          {"active_nodes", r.active_nodes},
          {"senders", r.senders},
          {"receivers", r.receivers},
          {"aggregate", r.aggregate_mbps}}},
        {"or_exhausted_mean_fraction", r.mean_or_exhausted},
        {"packet_rtt", dist_json(r.packet_rtt)},
        {"message_latency", dist_json(r.message_latency)},
        {"transfer_latency", dist_json(r.transfer_latency)},
    };
    j.update(measurement_json(r));
    if (r.replayed)
        j["replay"] = {{"ranks", r.replay.ranks},
                       {"messages", r.replay.messages},
                       {"bytes", r.replay.bytes},
                       {"unmatched_receives", r.replay.unmatched_receives},
                       {"dropped_records", r.replay.dropped},
                       {"recorded_us", r.replay.recorded_us},
                       {"predicted_us", r.replay.predicted_us},
                       {"ratio", replay_ratio(r)}};
    if (r.lanes_reported)
        j["flow_control"] = {{"mode", r.flow_control},
                             {"vls", r.vls},
                             {"vl_rule", r.vl_rule},
                             {"routing", r.routing},
                             {"lane_buffer_bytes", r.lane_buffer_bytes},
                             {"buffer_overflows", r.buffer_overflows},
                             {"peak_buffer_bytes", r.peak_buffer_bytes}};
    return j;
}

// Why the run ended when it did not simply finish.
std::string ending_text(const Results &r) {
    const std::string pending = std::to_string(r.transfers_pending) + " transfers pending";
    const std::string quiet = "no packet reached a NIC for " + fmt("%.0f", r.stall_us) +
                              " us with " + pending + "; stopped at " +
                              fmt("%.3f", r.stalled_at_us) + " us";
    if (r.deadlock && r.stalled)
        return "DEADLOCK: packets sit in router FIFOs waiting for each other and every link is "
               "idle: " +
               quiet + "\n";
    if (r.deadlock) return "DEADLOCK: packets stopped moving with transfers still in flight\n";
    if (r.stalled) return "STALLED: " + quiet + "\n";
    if (r.complete) return "";
    if (r.window_given)
        return "note: " + std::to_string(r.window_undrained) +
               " transfers queued in the measurement window were still in flight at the end "
               "(raise --drain-us or --time-limit-us)\n";
    if (r.open_loop)
        return "note: open-loop traffic never finishes; the time limit ended the run with " +
               pending + " (--measure gives a drained window)\n";
    return "note: the time limit ended the run before the workload finished\n";
}

// Rates over the span, the spread of the nodes' own rates, and the steady-state check.
std::string rates_text(const Results &r) {
    std::ostringstream o;
    if (r.window_given)
        o << "measured " << fmt("%.3f", r.span_begin_us) << " to " << fmt("%.3f", r.span_end_us)
          << " us: " << r.window_transfers << " transfers queued, " << r.window_undrained
          << " still in flight at the end\n";
    o << "per-node MB/s (active nodes): tx " << fmt("%.2f", r.mean_tx_mbps) << "  rx "
      << fmt("%.2f", r.mean_rx_mbps) << "  bidirectional mean " << fmt("%.2f", r.mean_bidir_mbps)
      << "; aggregate " << fmt("%.1f", r.aggregate_mbps)
      << " MB/s = " << fmt("%.1f", 100 * r.throughput_fraction)
      << "% of the senders' injection capacity (" << fmt("%.2f", r.capacity_mbps)
      << " MB/s each)\n";
    o << "per node over its own active time, bidirectional MB/s: min "
      << fmt("%.2f", r.min_bidir_mbps) << "  p50 " << fmt("%.2f", r.p50_bidir_mbps) << "  p99 "
      << fmt("%.2f", r.p99_bidir_mbps) << "  max " << fmt("%.2f", r.max_bidir_mbps) << "  ("
      << r.active_nodes << " of " << r.nodes << " nodes active)\n";
    if (r.offered_load >= 0)
        o << "open loop: offered load " << fmt("%.3f", r.offered_load) << ", injected "
          << fmt("%.3f", r.injected_fraction) << ", accepted " << fmt("%.3f", r.throughput_fraction)
          << " of injection capacity; zero-load transfer "
          << "latency " << fmt("%.3f", r.zero_load_latency_us) << " us, measured mean "
          << (r.transfer_latency.count > 0 ? fmt("%.3f", r.transfer_latency.mean_us) + " us"
                                           : std::string("n/a (none finished)"))
          << "\n";
    if (!r.open_loop && !r.window_given) {
        // Halves of a run to completion differ as senders finish: no steady state to find.
        o << "steady state: not checked (a workload run to its end; open loops with --measure "
             "have one)\n";
    } else if (!r.steady_known) {
        o << "steady state: unknown (a half of the span delivered or queued nothing)\n";
    } else {
        const bool lat = !std::isnan(r.latency_drift);
        o << "steady state: " << (r.steady ? "yes" : "NO") << " (between the halves throughput "
          << fmt("%+.1f", 100 * r.throughput_drift) << "%, mean transfer latency "
          << (lat ? fmt("%+.1f", 100 * r.latency_drift) + "%" : std::string("n/a")) << ", up to "
          << fmt("%.1f", 100 * r.unfinished) << "% of a half's transfers unfinished; tolerance "
          << fmt("%.0f", 100 * r.steady_tolerance) << "%)\n";
    }
    return o.str();
}

}  // namespace

std::string to_text(const Results &r) {
    std::ostringstream o;
    o << "sansim: " << r.workload << " on " << r.topology << " (" << r.nodes << " nodes, "
      << r.fabrics << " fabric" << (r.fabrics > 1 ? "s" : "") << ", "
      << (r.restricted ? "restricted" : "unrestricted") << ")\n";
    // A saturated run's one line says more than the note on how it ended.
    const std::string v = verdict(r);
    o << (v.empty() ? ending_text(r) : v);
    o << replay_text(r);
    if (r.lanes_reported)
        o << "flow control " << r.flow_control << ", " << r.vls << " virtual lane"
          << (r.vls > 1 ? "s" : "") << " of " << r.lane_buffer_bytes << " B, lane rule "
          << r.vl_rule << ", routing " << r.routing
          << (r.flow_control == "credit"
                  ? ", buffer overflows " + std::to_string(r.buffer_overflows) + " (peak " +
                        std::to_string(r.peak_buffer_bytes) + " B)"
                  : std::string())
          << "\n";
    o << "simulated " << fmt("%.3f", r.sim_time_us) << " us in " << fmt("%.3f", r.wall_s)
      << " s wall; " << r.events << " events, " << fmt("%.3g", r.events_per_s) << " events/s\n";
    o << "setup " << fmt("%.3f", r.setup_s) << " s; peak RSS "
      << fmt("%.1f", static_cast<double>(r.peak_rss_bytes) / (1 << 20)) << " MiB, "
      << fmt("%.0f", r.rss_per_node_bytes) << " B per node\n";
    o << "packets " << r.packets << ", payload injected " << r.payload_injected << " B, delivered "
      << r.payload_delivered << " B, duplicates " << r.duplicates << ", mean hops "
      << fmt("%.2f", r.mean_hops) << "\n";
    o << rates_text(r);
    o << "outstanding-request exhausted: " << fmt("%.1f", 100 * r.mean_or_exhausted)
      << "% of NIC time\n";
    if (r.packet_rtt.count == 0 && r.acks == "none")
        o << "packet RTT: none (writes get no response under --acks none)\n";
    else
        o << dist_text("packet RTT", r.packet_rtt);
    if (r.request_rtt.count > 0)
        o << dist_text("request RTT (slot held, the BTE's PCI read included)", r.request_rtt)
          << "request-limited bandwidth (outstanding x payload / mean request RTT): "
          << fmt("%.2f", r.request_limited_mbps) << " MB/s\n";
    if (r.uses_messages) o << dist_text("message latency", r.message_latency);
    o << dist_text("transfer latency", r.transfer_latency);
    double max_util = 0;
    for (const LinkResult &l : r.links) max_util = std::max(max_util, l.utilization);
    o << "busiest link direction: " << fmt("%.1f", 100 * max_util) << "% busy\n";
    return o.str();
}

std::string to_json(const Results &r, bool full) {
    nlohmann::json j = summary_json(r);
    if (full) {
        nlohmann::json nodes = nlohmann::json::array();
        for (const NodeResult &n : r.per_node)
            nodes.push_back({{"node", n.node},
                             {"active", n.active},
                             {"tx_mbps", n.tx_mbps},
                             {"rx_mbps", n.rx_mbps},
                             {"bidir_mbps", n.bidir_mbps},
                             {"or_exhausted_fraction", n.or_exhausted_fraction},
                             {"pci_utilization", n.pci_utilization},
                             {"latency_p50_us", n.latency_p50_us},
                             {"latency_p99_us", n.latency_p99_us}});
        j["per_node"] = nodes;
        nlohmann::json links = nlohmann::json::array();
        for (const LinkResult &l : r.links)
            links.push_back({{"from", l.from},
                             {"to", l.to},
                             {"name", l.name},
                             {"fabric", l.fabric},
                             {"kind", l.kind},
                             {"utilization", l.utilization},
                             {"packets", l.packets},
                             {"router_port", l.router_port}});
        j["links"] = links;
        nlohmann::json hist = nlohmann::json::array();
        // [lower_us, count, width_us]: the width came after the first two, so it is last.
        for (const RttBucket &b : r.rtt_histogram)
            hist.push_back({b.lower_us, b.count, b.width_us});
        j["packet_rtt_histogram"] = hist;
        j["or_series"] = {{"bin_us", r.series_bin_us}, {"fraction", r.or_series}};
    }
    return j.dump(2) + "\n";
}

std::string sweep_json(const std::vector<Results> &rows) {
    nlohmann::json j = nlohmann::json::array();
    for (const Results &r : rows) j.push_back(summary_json(r));
    return j.dump(2) + "\n";
}

void write_file(const std::string &path, const std::string &text) {
    const std::string why = viaduct::write_file_atomically(path, text);
    if (!why.empty()) throw std::runtime_error(why);
}

void write_csv(const Results &r, const std::string &dir) {
    std::ostringstream nodes;
    nodes << "node,tx_mbps,rx_mbps,bidir_mbps,or_exhausted_fraction,pci_utilization,active,"
             "latency_p50_us,latency_p99_us\n";
    for (const NodeResult &n : r.per_node)
        nodes << n.node << ',' << n.tx_mbps << ',' << n.rx_mbps << ',' << n.bidir_mbps << ','
              << n.or_exhausted_fraction << ',' << n.pci_utilization << ',' << (n.active ? 1 : 0)
              << ',' << n.latency_p50_us << ',' << n.latency_p99_us << '\n';
    write_file(dir + "/nodes.csv", nodes.str());
    std::ostringstream links;
    links << "index,from,to,router_port,utilization,packets,name,fabric,kind\n";
    for (std::size_t i = 0; i < r.links.size(); ++i) {
        const LinkResult &l = r.links[i];
        links << i << ',' << l.from << ',' << l.to << ',' << (l.router_port ? 1 : 0) << ','
              << l.utilization << ',' << l.packets << ',' << l.name << ',' << l.fabric << ','
              << l.kind << '\n';
    }
    // Buckets are as wide as the histogram made them (doubling at each power of two), so the
    // density, not the count, is what compares across the axis; digits enough to recompute it.
    write_file(dir + "/links.csv", links.str());
    std::ostringstream hist;
    hist << "rtt_us,width_us,count,density_per_us\n";
    hist.precision(12);
    for (const RttBucket &b : r.rtt_histogram)
        hist << b.lower_us << ',' << b.width_us << ',' << b.count << ',' << b.density() << '\n';
    write_file(dir + "/rtt_histogram.csv", hist.str());
    std::ostringstream series;
    series << "time_us,or_exhausted_fraction\n";
    for (std::size_t i = 0; i < r.or_series.size(); ++i)
        series << static_cast<double>(i) * r.series_bin_us << ',' << r.or_series[i] << '\n';
    write_file(dir + "/or_series.csv", series.str());
}

void write_sweep_csv(const std::vector<Results> &rows, const std::string &path) {
    std::ostringstream f;
    f << "nodes,protocol,bidir_mbps,tx_mbps,rx_mbps,or_exhausted,packet_rtt_mean_us,sim_time_us\n";
    for (const Results &r : rows)
        f << r.nodes << ',' << (r.restricted ? "restricted" : "unrestricted") << ','
          << r.mean_bidir_mbps << ',' << r.mean_tx_mbps << ',' << r.mean_rx_mbps << ','
          << r.mean_or_exhausted << ',' << r.packet_rtt.mean_us << ',' << r.sim_time_us << '\n';
    write_file(path, f.str());
}

}  // namespace sansim
