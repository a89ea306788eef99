// Simulated time: integer picoseconds, so a 50 MHz symbol clock (20,000 ps) is exact.
#pragma once
#include <cstdint>

namespace sansim {

using Time = std::int64_t;

constexpr Time kPs = 1;
constexpr Time kNs = 1000;
constexpr Time kUs = 1000 * kNs;
constexpr Time kMs = 1000 * kUs;

inline double to_us(Time t) {
    return static_cast<double>(t) / kUs;
}
inline double to_seconds(Time t) {
    return static_cast<double>(t) * 1e-12;
}
inline Time from_ns(double ns) {
    return static_cast<Time>(ns * kNs + 0.5);
}
inline Time from_us(double us) {
    return static_cast<Time>(us * kUs + 0.5);
}

// Picoseconds per byte at `mbps` MB/s (10^6 bytes per second).
inline Time ps_per_byte(double mbps) {
    return static_cast<Time>(1e6 / mbps + 0.5);
}

}  // namespace sansim
