// Whether a run's figures mean what they seem to. An open loop offered more than the network
// accepts never settles: its queues grow with the run, so its latencies say how long it ran.
// The verdict is one line naming what happened and the option that gives meaningful figures.
#include <cstdio>
#include <string>

#include "report/results.hpp"

namespace sansim {
namespace {

// Accepted below this share of what the window injected: saturated (the load sweep's rule
// allows 5% for the window's edges; a single run is given twice that).
constexpr double kAcceptedShare = 0.9;

// The option that gives meaningful figures, by what held the nodes back.
std::string remedy(const Results &r, double injected_mbps) {
    const bool nic_bound = r.request_limited_mbps > 0 && r.request_limited_mbps < injected_mbps &&
                           (r.pci_mbps > 0 || r.acks != "none");
    const std::string nic = "the NICs' outstanding requests carry at most " +
                            fmt("%.2f", r.request_limited_mbps) + " MB/s each";
    if (r.workload == "phase3b")
        return (nic_bound ? nic + "; " : std::string()) +
               "lower --rate for steady figures (and --measure for a drained window)";
    if (nic_bound)
        return nic +
               " (PCI reads, acknowledgements): switch experiments use --acks none "
               "--pci-mbps 0";
    return "the accepted load is the saturation throughput; for latencies lower --load "
           "(--sweep-load finds where saturation starts)";
}

}  // namespace

std::string verdict(const Results &r) {
    if (r.deadlock || r.stalled || !r.open_loop) return "";
    if (!(r.injected_fraction > 0) || r.throughput_fraction >= kAcceptedShare * r.injected_fraction)
        return "";
    const double injected_mbps = r.injected_fraction * r.capacity_mbps;
    return "SATURATED: the nodes injected " + fmt("%.2f", injected_mbps) + " MB/s each (" +
           fmt("%.3f", r.injected_fraction) + " of capacity) and the network accepted " +
           fmt("%.2f", r.throughput_fraction * r.capacity_mbps) + " (" +
           fmt("%.3f", r.throughput_fraction) +
           "); the rest queues without end, so latencies grow with the run and mean little; " +
           remedy(r, injected_mbps) + "\n";
}

}  // namespace sansim
