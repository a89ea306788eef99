// Renderings of Results: a text summary, JSON (nlohmann/json), CSV files.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "report/results.hpp"

namespace sansim {
namespace {

nlohmann::json dist_json(const Distribution &d) {
    return {{"count", d.count}, {"min_us", d.min_us}, {"mean_us", d.mean_us}, {"p50_us", d.p50_us},
            {"p90_us", d.p90_us}, {"p99_us", d.p99_us}, {"max_us", d.max_us}};
}

std::string fmt(const char *f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string dist_text(const char *name, const Distribution &d) {
    if (d.count == 0) return std::string(name) + ": none\n";
    return std::string(name) + " (us): min " + fmt("%.3f", d.min_us) + "  mean " +
           fmt("%.3f", d.mean_us) + "  p50 " + fmt("%.3f", d.p50_us) + "  p90 " +
           fmt("%.3f", d.p90_us) + "  p99 " + fmt("%.3f", d.p99_us) + "  max " +
           fmt("%.3f", d.max_us) + "  (" + std::to_string(d.count) + " samples)\n";
}

nlohmann::json summary_json(const Results &r) {
    return {
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
          {"aggregate", r.aggregate_mbps}}},
        {"or_exhausted_mean_fraction", r.mean_or_exhausted},
        {"packet_rtt", dist_json(r.packet_rtt)},
        {"message_latency", dist_json(r.message_latency)},
        {"transfer_latency", dist_json(r.transfer_latency)},
    };
}

std::ofstream open_out(const std::string &path) {
    std::ofstream f(path);
    if (!f) throw std::runtime_error(path + ": cannot write");
    return f;
}

}  // namespace

std::string to_text(const Results &r) {
    std::ostringstream o;
    o << "sansim: " << r.workload << " on " << r.topology << " (" << r.nodes << " nodes, "
      << r.fabrics << " fabric" << (r.fabrics > 1 ? "s" : "") << ", "
      << (r.restricted ? "restricted" : "unrestricted") << ")\n";
    if (r.deadlock) o << "DEADLOCK: packets stopped moving with transfers still in flight\n";
    else if (!r.complete) o << "note: the time limit ended the run before the workload finished\n";
    o << "simulated " << fmt("%.3f", r.sim_time_us) << " us in " << fmt("%.3f", r.wall_s)
      << " s wall; " << r.events << " events, " << fmt("%.3g", r.events_per_s) << " events/s\n";
    o << "packets " << r.packets << ", payload injected " << r.payload_injected << " B, delivered "
      << r.payload_delivered << " B, duplicates " << r.duplicates << ", mean hops "
      << fmt("%.2f", r.mean_hops) << "\n";
    o << "per-node MB/s: tx " << fmt("%.2f", r.mean_tx_mbps) << "  rx " << fmt("%.2f", r.mean_rx_mbps)
      << "  bidirectional mean " << fmt("%.2f", r.mean_bidir_mbps) << " (min "
      << fmt("%.2f", r.min_bidir_mbps) << ", max " << fmt("%.2f", r.max_bidir_mbps)
      << "); aggregate " << fmt("%.1f", r.aggregate_mbps) << " MB/s\n";
    o << "outstanding-request exhausted: " << fmt("%.1f", 100 * r.mean_or_exhausted)
      << "% of NIC time\n";
    o << dist_text("packet RTT", r.packet_rtt);
    o << dist_text("message latency", r.message_latency);
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
            nodes.push_back({{"node", n.node}, {"tx_mbps", n.tx_mbps}, {"rx_mbps", n.rx_mbps},
                             {"bidir_mbps", n.bidir_mbps},
                             {"or_exhausted_fraction", n.or_exhausted_fraction},
                             {"pci_utilization", n.pci_utilization}});
        j["per_node"] = nodes;
        nlohmann::json links = nlohmann::json::array();
        for (const LinkResult &l : r.links)
            links.push_back({{"from", l.from}, {"to", l.to}, {"utilization", l.utilization},
                             {"packets", l.packets}, {"router_port", l.router_port}});
        j["links"] = links;
        nlohmann::json hist = nlohmann::json::array();
        for (const auto &[lo, c] : r.rtt_histogram) hist.push_back({lo, c});
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

void write_csv(const Results &r, const std::string &dir) {
    auto nodes = open_out(dir + "/nodes.csv");
    nodes << "node,tx_mbps,rx_mbps,bidir_mbps,or_exhausted_fraction,pci_utilization\n";
    for (const NodeResult &n : r.per_node)
        nodes << n.node << ',' << n.tx_mbps << ',' << n.rx_mbps << ',' << n.bidir_mbps << ','
              << n.or_exhausted_fraction << ',' << n.pci_utilization << '\n';
    auto links = open_out(dir + "/links.csv");
    links << "index,from,to,router_port,utilization,packets\n";
    for (std::size_t i = 0; i < r.links.size(); ++i)
        links << i << ',' << r.links[i].from << ',' << r.links[i].to << ','
              << (r.links[i].router_port ? 1 : 0) << ',' << r.links[i].utilization << ','
              << r.links[i].packets << '\n';
    auto hist = open_out(dir + "/rtt_histogram.csv");
    hist << "rtt_us,count\n";
    for (const auto &[lo, c] : r.rtt_histogram) hist << lo << ',' << c << '\n';
    auto series = open_out(dir + "/or_series.csv");
    series << "time_us,or_exhausted_fraction\n";
    for (std::size_t i = 0; i < r.or_series.size(); ++i)
        series << static_cast<double>(i) * r.series_bin_us << ',' << r.or_series[i] << '\n';
}

void write_sweep_csv(const std::vector<Results> &rows, const std::string &path) {
    auto f = open_out(path);
    f << "nodes,protocol,bidir_mbps,tx_mbps,rx_mbps,or_exhausted,packet_rtt_mean_us,sim_time_us\n";
    for (const Results &r : rows)
        f << r.nodes << ',' << (r.restricted ? "restricted" : "unrestricted") << ','
          << r.mean_bidir_mbps << ',' << r.mean_tx_mbps << ',' << r.mean_rx_mbps << ','
          << r.mean_or_exhausted << ',' << r.packet_rtt.mean_us << ',' << r.sim_time_us << '\n';
}

}  // namespace sansim
