// Seconds on the monotonic clock: the one way viaduct times what it measures.
#pragma once

#include <chrono>

namespace viaduct {

using Clock = std::chrono::steady_clock;

// Seconds since an arbitrary fixed point; only differences mean anything.
inline double now_seconds() {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// Seconds elapsed since `start`.
inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace viaduct
