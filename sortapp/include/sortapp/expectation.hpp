// The expectations model (tuning-now-sort-1998 §3): what a phase should take, from the bytes it
// must read, write and send and the rates measured on this machine. Any algorithm describes its
// phases as volumes and asks this one function, so every report is judged the same way.
#pragma once

#include <cstdint>
#include <vector>

namespace sortapp {

// Measured rates in MB/s (10^6 bytes); 0 means unknown.
struct Rates {
    double disk_read = 0;
    double disk_write = 0;
    // Reads and writes at once on the same disk: bytes read plus bytes written per second.
    // 0: unknown, reads and writes are then taken to take turns (read/R + write/W).
    double disk_mixed = 0;
    double network = 0;  // per node, the larger of the send and receive directions
};

// What a phase must move, and which of its transfers go on at the same time.
struct PhaseVolume {
    std::uint64_t read = 0;   // bytes read from the local disk
    std::uint64_t write = 0;  // bytes written to the local disk
    std::uint64_t send = 0;   // bytes sent to other nodes
    std::uint64_t receive = 0;
    // Reading and writing overlap (a merge streams in while it streams out): the mixed rate.
    // Otherwise they follow one another (read everything, sort, write everything).
    bool read_write_overlap = false;
    // The network moves while the disk does (a river sends while it reads): the slower of the
    // two; otherwise one after the other.
    bool network_overlap = true;
};

// The phase's expected seconds; 0 when a rate it needs is unknown (no expectation beats a wrong
// one). A phase that moves nothing is expected to take 0 s.
double expected_seconds(const PhaseVolume &volume, const Rates &rates);

// The single-node sort's phases. Run formation (or a one-pass sort) reads a run, sorts it, then
// writes it: reads and writes take turns; a run kept in memory (`kept` bytes) is not written.
PhaseVolume formation_volume(std::uint64_t bytes, std::uint64_t kept);
// Each merge pass streams every run in while the merged output streams out; a run kept in
// memory (one pass only) is not read.
PhaseVolume merge_volume(std::uint64_t bytes, unsigned passes, std::uint64_t kept);

// A sequence of phases one after another (a river sort: read+send, then sort, then write once;
// or runs then a merge): the sum, or 0 when any phase's expectation is unknown.
double expected_seconds(const std::vector<PhaseVolume> &phases, const Rates &rates);

// A phase that ran faster than its expectation by more than `margin` (actual < (1 - margin) x
// expected) shows the figure behind the expectation is stale: measured while the machine was
// busy, or on other hardware. Unknown expectations are never stale.
constexpr double stale_margin = 0.20;  // beating the figure by 25% or more
bool beats_expectation(double actual_seconds, double expected_seconds,
                       double margin = stale_margin);

}  // namespace sortapp
