// A load sweep's renderings: the latency-versus-offered-load table (text, CSV, JSON), its plot
// and the saturation point, where accepted throughput stops keeping up with the offered load.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/results.hpp"

namespace sansim {
namespace {

bool saturated(const Results &r, double threshold) {
    return r.stalled || r.deadlock || r.throughput_fraction < threshold * r.injected_fraction;
}

std::string saturation_text(const Saturation &s) {
    std::string t = "highest accepted throughput " + fmt("%.3f", s.max_accepted) +
                    " of injection capacity (at offered " + fmt("%.3f", s.max_accepted_at) + ")";
    if (!s.reached)
        return "saturation: not reached (accepted kept within " + fmt("%.0f", 100 * s.threshold) +
               "% of injected); " + t + "\n";
    return "saturation: accepted falls below " + fmt("%.0f", 100 * s.threshold) +
           "% of injected between offered " + fmt("%.3f", s.last_below) + " and " +
           fmt("%.3f", s.first_at) + "; " + t + "\n";
}

}  // namespace

Saturation find_saturation(const std::vector<Results> &rows, double threshold) {
    Saturation s;
    s.threshold = threshold;
    for (const Results &r : rows) {
        if (r.throughput_fraction > s.max_accepted) {
            s.max_accepted = r.throughput_fraction;
            s.max_accepted_at = r.offered_load;
        }
        if (s.reached) continue;
        if (saturated(r, threshold)) {
            s.reached = true;
            s.first_at = r.offered_load;
        } else {
            s.last_below = r.offered_load;
        }
    }
    return s;
}

std::string load_sweep_text(const std::vector<Results> &rows) {
    std::string t;
    if (!rows.empty())
        t += "sansim: openloop on " + rows[0].topology + " (" + std::to_string(rows[0].nodes) +
             " nodes, acks " + rows[0].acks + "); zero-load transfer latency " +
             fmt("%.3f", rows[0].zero_load_latency_us) + " us\n";
    t += "offered  injected  accepted  latency (us): mean       p50       p99  steady  complete\n";
    for (const Results &r : rows) {
        const Distribution &l = r.transfer_latency;
        const char *done = r.stalled ? "STALLED" : r.complete ? "yes" : "no";
        t += fmt("%7.3f", r.offered_load) + "  " + fmt("%8.3f", r.injected_fraction) + "  " +
             fmt("%8.3f", r.throughput_fraction) + "  " + fmt("%18.3f", l.mean_us) + " " +
             fmt("%9.3f", l.p50_us) + " " + fmt("%9.3f", l.p99_us) + "  " +
             (r.steady ? "yes   " : "NO    ") + "  " + done + "\n";
    }
    return t + saturation_text(find_saturation(rows));
}

std::string load_sweep_json(const std::vector<Results> &rows) {
    nlohmann::json points = nlohmann::json::array();
    for (const Results &r : rows)
        points.push_back({{"offered", r.offered_load},
                          {"injected", r.injected_fraction},
                          {"accepted", r.throughput_fraction},
                          {"latency_mean_us", r.transfer_latency.mean_us},
                          {"latency_p50_us", r.transfer_latency.p50_us},
                          {"latency_p99_us", r.transfer_latency.p99_us},
                          {"steady", r.steady},
                          {"complete", r.complete},
                          {"run", nlohmann::json::parse(to_json(r, false))}});
    const Saturation s = find_saturation(rows);
    nlohmann::json j = {{"points", points},
                        {"zero_load_latency_us", rows.empty() ? 0 : rows[0].zero_load_latency_us},
                        {"saturation",
                         {{"reached", s.reached},
                          {"last_below", s.last_below},
                          {"first_at", s.first_at},
                          {"threshold", s.threshold},
                          {"max_accepted", s.max_accepted},
                          {"max_accepted_at", s.max_accepted_at}}}};
    return j.dump(2) + "\n";
}

void write_load_sweep_csv(const std::vector<Results> &rows, const std::string &path) {
    std::ostringstream f;
    f << "offered,injected,accepted,latency_mean_us,latency_p50_us,latency_p99_us,"
         "zero_load_latency_us,steady,complete\n";
    for (const Results &r : rows)
        f << r.offered_load << ',' << r.injected_fraction << ',' << r.throughput_fraction << ','
          << r.transfer_latency.mean_us << ',' << r.transfer_latency.p50_us << ','
          << r.transfer_latency.p99_us << ',' << r.zero_load_latency_us << ',' << (r.steady ? 1 : 0)
          << ',' << (r.complete ? 1 : 0) << '\n';
    write_file(path, f.str());
}

}  // namespace sansim
