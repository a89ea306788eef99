// The needle finder (tuning-now-sort-1998 §6): after a run, the nodes slower than the median of
// their phase, and what their counters show slowed each one: another process on its CPU, a disk
// short of its probe, paging, a slower network, or a larger partition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "viaduct/counters.hpp"

namespace sortapp {

// One node's work in one phase, reduced from its samples.
struct PhaseCounters {
    int node = 0;
    std::string phase;        // "phase 1", "phase 3b", "river sort"...
    double seconds = 0;       // how long the node spent in it
    std::uint64_t bytes = 0;  // its share of the work (partition or input bytes); 0: unknown
    double other_cpu = 0;     // mean share of the host's CPU busy in other processes, 0..1
    double proc_cpu = 0;      // mean CPUs this process used
    double disk_mb_s = 0;     // device read+write MB/s over the phase (0: no device figure)
    double disk_busy = 0;     // share of the phase the device had requests in flight (0: unknown)
    double disk_expected_mb_s = 0;   // what the node's disk probe said it should do (0: unknown)
    std::uint64_t major_faults = 0;  // over the phase
    double net_mb_s = 0;             // sent + received over the phase
};

// Reduces one node's samples (in time order, all within the phase) to its PhaseCounters: the
// figures between the first sample and the last, so every mean is weighted by time. `seconds`
// is the time between those samples; a caller that timed the phase itself may overwrite it.
// Fewer than two samples give only the node, phase, bytes and expectation.
PhaseCounters summarize(int node, const std::string &phase,
                        const std::vector<viaduct::CounterSample> &samples, std::uint64_t bytes,
                        double disk_expected_mb_s);

struct Needle {
    int node = 0;
    std::string phase;
    double ratio = 0;   // its time over the phase's median
    std::string cause;  // "cpu", "disk", "paging", "network", "partition" or "unknown"
    // "needle: node 2, phase 3b, 1.41x the median: other processes took 46% of its CPU against
    // 2% on the others; its disk delivered 212 MB/s while busy against 405 from its probe..."
    std::string text;
    // The numbers behind the text: "node" and "others" (the other nodes' medians) with the
    // PhaseCounters fields, "median_seconds", "ratio", and "evidence": every cause past its
    // threshold with its strength, strongest first.
    nlohmann::json figures;
};

// Which nodes count, and which phases can be judged at all.
//
// Two nodes give no majority to say which one is normal: a phase needs three.
constexpr std::size_t needle_min_nodes = 3;
// Five samples at the sampler's ten a second: fewer, and one burst decides every mean.
constexpr double needle_min_phase_seconds = 0.5;
// A phase's time read from samples 0.1 s apart is uncertain by a sample period at either end;
// a straggler's excess over the median (straggler x median) must be larger than this, so a
// phase is judged only when its median is at least needle_timing_noise_seconds / straggler.
constexpr double needle_timing_noise_seconds = 0.2;

// The evidence for each cause: the slow node's figure against the other nodes' median in the
// same phase.
//
// cpu: other processes used at least a fifth of the host (on two CPUs, 0.4 of a CPU: less than
// that, a sort that waits on its disk absorbs it; daemons and the sampler stay far below) and
// at least double the others' share (a load every host carries does not single one out).
constexpr double needle_cpu_other_min = 0.20;
constexpr double needle_cpu_other_factor = 2.0;
// disk: the paper measured a disk's read bandwidth varying by 30% with the layout of its files
// (its "extra data on disks" needle): under 0.7 of its probe is a disk that lost at least that.
// The others must have come closer to theirs (its share of its probe under 0.8 of their
// median share), or the shortfall is common to all (a stale probe, a phase that does not
// stream). Without probe figures: under 0.7 of the others' median MB/s.
constexpr double needle_disk_probe_fraction = 0.7;
constexpr double needle_disk_behind_others = 0.8;
// The disk is judged by what it delivered while busy (MB/s over the phase / busy share): a
// node slowed by anything else moves its bytes over a longer time, and its rate over the phase
// falls with it, but its rate while busy does not. A device busy under half the phase was
// waiting for the sort, not holding it back.
constexpr double needle_disk_busy_min = 0.5;
// paging: a hundred major faults is a hundred random reads, near a second on a spinning disk,
// as much as a judged phase can lose; ten times the others' count is past the way start-up
// page-ins vary from node to node.
constexpr std::uint64_t needle_paging_faults_min = 100;
constexpr double needle_paging_factor = 10.0;
// network: under 0.7 of the others' median MB/s (the disk's margin: the exchange spreads evenly
// over the nodes), while its work was not smaller than 0.9 of theirs (a node with less to send
// and receive moves less).
constexpr double needle_net_fraction = 0.7;
constexpr double needle_comparable_work = 0.9;
// partition: 15% more bytes than the others' median, past the spread of sampled splitters and
// enough for over half of a 25% straggler's excess; the extra bytes must account for at least
// half of its extra time (time roughly proportional to them), or they are not what slowed it.
constexpr double needle_partition_factor = 1.15;
constexpr double needle_partition_share_of_excess = 0.5;

// Names each node slower than the median of its phase by more than `straggler` (0.25: more
// than 1.25x the median), in the order the phases first appear, and its nodes in input order.
// Phases with fewer than needle_min_nodes nodes, or whose median is under
// max(needle_min_phase_seconds, needle_timing_noise_seconds / straggler), name nothing; so does
// a straggler that is not positive.
//
// A cause's strength is how far its figure is from the others', in units of its threshold (1:
// just at it); the strongest names the needle and a second one past its threshold is mentioned
// too. The network's rate, and the disk's when its busy time is unknown, fall with any
// slowdown: they name a needle only when no other figure explains it, and are never the second.
std::vector<Needle> find_needles(const std::vector<PhaseCounters> &phases, double straggler);

}  // namespace sortapp
