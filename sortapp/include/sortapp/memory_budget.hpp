// NOW-Sort's memory tool, the cheap way: what the kernel says is available (/proc/meminfo's
// MemAvailable) capped by the cgroup limit (v2 memory.max or v1 limit_in_bytes), less a margin.
#pragma once

#include <cstdint>
#include <string>

#include "viaduct/host_memory.hpp"

namespace sortapp {

// The files' parsers (viaduct/host_memory.hpp).
using viaduct::cgroup_headroom;
using viaduct::meminfo_available;

struct MemoryFigures {
    std::uint64_t available = 0;        // from /proc/meminfo
    std::uint64_t cgroup_headroom = 0;  // UINT64_MAX when unlimited
    std::uint64_t budget = 0;           // min of the two, less the safety margin
};

// The safety margin: 10% and at least 64 MiB left for everything else.
MemoryFigures default_memory_budget();

}  // namespace sortapp
