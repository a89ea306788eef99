// NOW-Sort's memory tool, the cheap way: what the kernel says is available (/proc/meminfo's
// MemAvailable) capped by the cgroup limit (v2 memory.max or v1 limit_in_bytes), less a margin.
#pragma once

#include <cstdint>
#include <string>

namespace sortapp {

// Parsers for the files' text, so they can be tested with any content.
std::uint64_t meminfo_available(const std::string &meminfo_text);  // 0 when absent
// A cgroup limit file's value minus current usage; UINT64_MAX for "max" or no file.
std::uint64_t cgroup_headroom(const std::string &limit_text, const std::string &usage_text);

struct MemoryFigures {
    std::uint64_t available = 0;        // from /proc/meminfo
    std::uint64_t cgroup_headroom = 0;  // UINT64_MAX when unlimited
    std::uint64_t budget = 0;           // min of the two, less the safety margin
};

// The safety margin: 10% and at least 64 MiB left for everything else.
MemoryFigures default_memory_budget();

}  // namespace sortapp
