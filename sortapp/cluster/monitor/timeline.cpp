// --timeline: every node's counter samples on the monitor's clock, written as the job's
// timeline (viaduct/timeline.hpp: JSON lines, CSV, a PNG and an HTML page) beside the report
// and the needles, after the job, or after its failure with what had arrived.
#include "viaduct/timeline.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "monitor/state.hpp"

namespace sortapp::cluster {

namespace {

// "sortapp: 4 nodes, three-phase, 1.07 GB" (and ", failed").
std::string title_of(const JobOptions &o, const JobFigures &job, const std::string &outcome) {
    uint64_t records = 0;
    for (const NodeCheck &c : job.checks) records += c.records;
    const double bytes = static_cast<double>(records) * static_cast<double>(o.params.record_size);
    char size[32];
    if (bytes >= 1e9)
        std::snprintf(size, sizeof size, "%.2f GB", bytes / 1e9);
    else
        std::snprintf(size, sizeof size, "%.1f MB", bytes / 1e6);
    std::string title = "sortapp: " + std::to_string(job.counters.size()) + " nodes, " +
                        (o.params.algorithm == kRiver ? "river" : "three-phase");
    if (!job.checks.empty()) title += std::string(", ") + size;
    if (!outcome.empty()) title += ", " + outcome;
    return title;
}

}  // namespace

Status write_timeline(const JobOptions &o, const JobFigures &job, const std::string &outcome,
                      const std::string &report, const std::vector<std::string> &needles) {
    Collated collated = collate(job.counters, job.checks);
    viaduct::timeline::Input in;
    in.title = title_of(o, job, outcome);
    in.phase_names = std::move(collated.phase_names);
    in.nodes = std::move(collated.nodes);
    in.needles = needles;
    in.report = report;
    try {
        viaduct::timeline::write(o.timeline, in);
    } catch (const std::exception &e) {
        return Status::error(std::string("--timeline: ") + e.what());
    }
    return Status::ok();
}

}  // namespace sortapp::cluster
