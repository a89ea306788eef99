// The needle finder over a job (sortapp/needle.hpp): for each node and phase, the time and
// bytes the node reported, with what its counter samples show over the phase, against the
// disk bandwidth its check measured.
#include <algorithm>
#include <string>
#include <vector>

#include "monitor/state.hpp"

namespace sortapp::cluster {

namespace {

// The name under which a node's progress (and so its samples) shows a phase it reports: the
// local sort that fits its memory reports "one-pass" but shows it as phase 1.
std::string shown_as(const std::string &phase) {
    return phase == "one-pass" ? "phase 1" : phase;
}

// The node's samples taken in that phase, in order.
std::vector<viaduct::CounterSample> samples_in(const NodeCounters &c, const std::string &phase) {
    std::vector<viaduct::CounterSample> in;
    for (const viaduct::CounterSample &s : c.samples)
        if (s.phase < c.phase_names.size() && c.phase_names[s.phase] == phase) in.push_back(s);
    return in;
}

// What the node's disk should deliver over a phase, read and written bytes together, from what
// its check measured of the whole device (the samples count the whole device's bytes too), in
// the expectations' model (sortapp/expectation.hpp): run formation reads and writes in turns,
// every other phase that does both does them at once (the mixed rate).
double disk_expected(const NodeCheck &c, const PhaseFigures &f) {
    const auto read = static_cast<double>(f.bytes_read);
    const auto written = static_cast<double>(f.bytes_written);
    if (read > 0 && written > 0 && shown_as(f.phase) == "phase 1")
        return c.disk_read_mb_s > 0 && c.disk_write_mb_s > 0
                   ? (read + written) / (read / c.disk_read_mb_s + written / c.disk_write_mb_s)
                   : 0;
    if (read > 0 && written > 0) return c.disk_mixed_mb_s;
    if (read > 0) return c.disk_read_mb_s;
    if (written > 0) return c.disk_write_mb_s;
    return 0;
}

// The node's share of the work in the phase: what it read and received, or wrote if more.
uint64_t work_bytes(const PhaseFigures &f) {
    return std::max(f.bytes_read + f.bytes_received, f.bytes_written);
}

}  // namespace

std::vector<Needle> job_needles(const JobOptions &o, const JobFigures &job,
                                const std::vector<std::vector<PhaseFigures>> &per) {
    std::vector<PhaseCounters> phases;
    for (size_t i = 0; i < per.size(); ++i) {
        const NodeCounters none;
        const NodeCounters &c = i < job.counters.size() ? job.counters[i] : none;
        const NodeCheck check = i < job.checks.size() ? job.checks[i] : NodeCheck{};
        for (const PhaseFigures &f : per[i]) {
            PhaseCounters pc =
                summarize(static_cast<int>(i), f.phase, samples_in(c, shown_as(f.phase)),
                          work_bytes(f), disk_expected(check, f));
            pc.seconds = f.seconds;  // the node timed the phase itself, closer than its samples
            phases.push_back(std::move(pc));
        }
    }
    // --straggler is a factor of the median; the finder takes the excess over it.
    return find_needles(phases, o.straggler - 1);
}

}  // namespace sortapp::cluster
