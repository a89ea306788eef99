// What memory this process may still take: the kernel's estimate of what is
// available (/proc/meminfo's MemAvailable), capped by the cgroup's limit
// (v2 memory.max or v1 limit_in_bytes) less its usage. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace viaduct {

namespace host_memory_detail {

inline std::string slurp(const std::string &path) {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The cgroup (v2 unified, else v1 memory controller) this process is in, as a directory.
inline std::string cgroup_dir(bool &v2) {
    std::istringstream lines(slurp("/proc/self/cgroup"));
    std::string line, v1_path, v2_path;
    while (std::getline(lines, line)) {
        // "hierarchy-ID:controller-list:path"
        auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (controllers.empty()) v2_path = path;
        if (controllers.find("memory") != std::string::npos) v1_path = path;
    }
    v2 = v1_path.empty();
    return v2 ? "/sys/fs/cgroup" + v2_path : "/sys/fs/cgroup/memory" + v1_path;
}

}  // namespace host_memory_detail

// Parsers for the files' text, so they can be tested with any content.
// MemAvailable in bytes; 0 when absent.
inline std::uint64_t meminfo_available(const std::string &text) {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("MemAvailable:", 0) == 0) {
            std::istringstream f(line.substr(13));
            std::uint64_t kb = 0;
            f >> kb;
            return kb * 1024;
        }
    }
    return 0;
}

// A cgroup limit file's value minus current usage; UINT64_MAX for "max" or no file.
inline std::uint64_t cgroup_headroom(const std::string &limit_text, const std::string &usage_text) {
    std::istringstream l(limit_text), u(usage_text);
    std::string limit_word;
    if (!(l >> limit_word) || limit_word == "max") return UINT64_MAX;
    std::uint64_t limit = 0, usage = 0;
    try {
        limit = std::stoull(limit_word);
    } catch (const std::exception &) {
        return UINT64_MAX;
    }
    // cgroup v1 reports "no limit" as a huge number.
    if (limit >= (std::uint64_t{1} << 62)) return UINT64_MAX;
    u >> usage;
    return usage >= limit ? 0 : limit - usage;
}

// Bytes as "12.3 MiB", for messages about memory.
inline std::string mib(double bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f MiB", bytes / (1024.0 * 1024.0));
    return b;
}

struct HostMemory {
    std::uint64_t available = 0;        // from /proc/meminfo
    std::uint64_t cgroup_headroom = 0;  // UINT64_MAX when unlimited
    std::uint64_t usable() const { return std::min(available, cgroup_headroom); }
};

inline HostMemory host_memory() {
    using namespace host_memory_detail;
    HostMemory m;
    m.available = meminfo_available(slurp("/proc/meminfo"));
    bool v2 = true;
    std::string dir = cgroup_dir(v2);
    m.cgroup_headroom =
        v2 ? cgroup_headroom(slurp(dir + "/memory.max"), slurp(dir + "/memory.current"))
           : cgroup_headroom(slurp(dir + "/memory.limit_in_bytes"),
                             slurp(dir + "/memory.usage_in_bytes"));
    return m;
}

}  // namespace viaduct
