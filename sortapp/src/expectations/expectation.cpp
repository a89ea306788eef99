// The expectations model: phase volumes and measured rates in, expected seconds out.
#include "sortapp/expectation.hpp"

#include <algorithm>
#include <cmath>

namespace sortapp {

namespace {

// Seconds to move `bytes` at `mb_s`; NaN when bytes must move at an unknown rate.
double transfer(std::uint64_t bytes, double mb_s) {
    if (bytes == 0) return 0;
    if (!(mb_s > 0) || !std::isfinite(mb_s)) return NAN;
    return double(bytes) / (mb_s * 1e6);
}

double disk_seconds(const PhaseVolume &v, const Rates &r) {
    if (v.read_write_overlap && v.read > 0 && v.write > 0 && r.disk_mixed > 0)
        return transfer(v.read + v.write, r.disk_mixed);
    return transfer(v.read, r.disk_read) + transfer(v.write, r.disk_write);
}

}  // namespace

double expected_seconds(const PhaseVolume &v, const Rates &r) {
    const double disk = disk_seconds(v, r);
    const double net = transfer(std::max(v.send, v.receive), r.network);
    const double t = v.network_overlap ? std::max(disk, net) : disk + net;
    // std::max drops a NaN in its second argument: check both parts explicitly.
    return std::isnan(disk) || std::isnan(net) || std::isnan(t) ? 0 : t;
}

double expected_seconds(const std::vector<PhaseVolume> &phases, const Rates &r) {
    double total = 0;
    for (const PhaseVolume &v : phases) {
        const double t = expected_seconds(v, r);
        const bool moves = v.read + v.write + v.send + v.receive > 0;
        if (moves && t <= 0) return 0;
        total += t;
    }
    return total;
}

PhaseVolume formation_volume(std::uint64_t bytes, std::uint64_t kept) {
    PhaseVolume v;
    v.read = bytes;
    v.write = bytes - kept;
    return v;
}

PhaseVolume merge_volume(std::uint64_t bytes, unsigned passes, std::uint64_t kept) {
    PhaseVolume v;
    v.read = bytes * passes - kept;
    v.write = bytes * passes;
    v.read_write_overlap = true;
    return v;
}

bool beats_expectation(double actual, double expected, double margin) {
    if (!(expected > 0) || !(actual >= 0) || !std::isfinite(expected)) return false;
    return actual < (1 - margin) * expected;
}

}  // namespace sortapp
