// The default memory budget from what the kernel and the cgroup allow.
#include "sortapp/memory_budget.hpp"

#include <algorithm>

namespace sortapp {

MemoryFigures default_memory_budget() {
    MemoryFigures f;
    const viaduct::HostMemory m = viaduct::host_memory();
    f.available = m.available;
    f.cgroup_headroom = m.cgroup_headroom;
    std::uint64_t usable = m.usable();
    std::uint64_t margin = std::max<std::uint64_t>(usable / 10, 64u << 20);
    f.budget = usable > margin ? usable - margin : 0;
    return f;
}

}  // namespace sortapp
