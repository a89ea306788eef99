// The memory a topology will take, worked out from a generator's arguments before anything is
// built, so absurd sizes are refused with the figure instead of dying in an allocation.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "topology/route_rules.hpp"
#include "topology/topology.hpp"

namespace sansim {
namespace {

double at(const std::vector<int> &a, std::size_t i, double otherwise) {
    return i < a.size() ? a[i] : otherwise;
}

// The generators' own counts (topology/<name>.cpp), in doubles so no argument overflows.
TopologySize fat_tree_size(const std::vector<int> &a, double f) {
    const double k = at(a, 0, 2), n = at(a, 1, 1), oversub = std::max(1.0, at(a, 2, 1));
    // Per level k^(n-1) routers; oversubscribed, the upper levels keep 1/oversub of them and
    // the leaves have k / oversub up ports.
    const double per_level = std::pow(k, n - 1), upper = (n - 1) * per_level / oversub;
    const double routers = (per_level + upper) * f;
    const double ports = (per_level * (k + k / oversub) + upper * 2 * k) * f;
    return {per_level * k, routers, ports, 2 * k, per_level * k * n * f, f};
}

TopologySize dragonfly_size(const std::vector<int> &a, double f) {
    const double ra = at(a, 0, 1), p = at(a, 1, 1), h = at(a, 2, 1);
    const double g = a.size() > 3 ? a[3] : ra * h + 1;
    const double routers = g * ra * f, ports = p + ra - 1 + h;
    return {g * ra * p, routers, routers * ports, ports, g * ra * p * f + routers * ports / 2, f};
}

std::string figure(double bytes) {
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    int u = 0;
    while (bytes >= 1024 && u < 8) {
        bytes /= 1024;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, bytes < 10 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

// "3 routers", "1 router".
std::string count(double n, const char *what) {
    char buf[96];
    std::snprintf(buf, sizeof buf, n < 1e15 ? "%.0f %s%s" : "%.3g %s%s", n, what,
                  n == 1 ? "" : "s");
    return buf;
}

// The cgroup's limit (cgroup v2), or infinity.
double cgroup_limit() {
    std::ifstream f("/sys/fs/cgroup/memory.max");
    double v = 0;
    return f >> v ? v : HUGE_VAL;
}

}  // namespace

TopologySize generator_size(const std::string &name, const std::vector<int> &a, int fabrics) {
    const double f = fabrics;
    if (name == "crossbar") {
        const double n = at(a, 0, 2);
        return {n, f, n * f, n, n * f, f};
    }
    if (name == "ring") {
        const double r = at(a, 0, 3), c = at(a, 1, 1);
        return {r * c, r * f, r * (c + 2) * f, c + 2, (r * c + r) * f, f};
    }
    if (name == "mesh" || name == "torus") {
        // {nodes per router, sizes...}: a link per router and dimension at most.
        const double c = at(a, 0, 1), dims = a.size() > 1 ? static_cast<double>(a.size() - 1) : 1;
        double r = 1;
        for (std::size_t k = 1; k < a.size(); ++k) r *= a[k];
        return {r * c, r * f, r * (c + 2 * dims) * f, c + 2 * dims, (r * c + dims * r) * f,
                f,     false};
    }
    if (name == "fattree" || name == "dragonfly") {
        TopologySize s = name == "fattree" ? fat_tree_size(a, f) : dragonfly_size(a, f);
        s.tables = false;
        return s;
    }
    if (name == "dual") {
        const double n = at(a, 0, 16), routers = 2 * (n / 4 + n / 8);
        return {n, routers, 6 * routers, 6, 2 * (n + n / 2 + n / 8), 2};
    }
    if (name == "chain") return {2, at(a, 0, 0), 2 * at(a, 0, 0), 2, at(a, 0, 0) + 1, 1};
    return {};
}

TopologySize topology_size(const Topology &t) {
    double ports = 0, widest = 0;
    for (const RouterSpec &r : t.routers) {
        ports += r.ports;
        widest = std::max(widest, static_cast<double>(r.ports));
    }
    return {
        static_cast<double>(t.nodes),        static_cast<double>(t.routers.size()), ports, widest,
        static_cast<double>(t.links.size()), static_cast<double>(t.fabrics)};
}

double model_bytes(const TopologySize &s) {
    const double devices = s.nodes + s.routers;
    // The description: routers (with a name), links (a channel each way in the network).
    const double description = s.routers * 96 + s.links * 48;
    // Routing: per port its peer and phase flags; with tables, per router, phase and
    // destination a port (2 bytes) and per router and destination the hop count (1 byte).
    const double tables = s.tables ? s.routers * 2 * s.nodes * 2 + s.routers * s.nodes : 0;
    const double routing = devices * 72 + (s.ports + s.nodes * s.fabrics) * 14 + tables;
    // The network: per channel its state and FIFO ring, and a waiting list with room for every
    // input of the widest router; per node its NIC.
    const double network = s.links * 2 * (160 + 8 * s.max_ports) + s.nodes * 512;
    return description + routing + network;
}

double memory_limit(std::string *what) {
    const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES));
    double limit = pages * static_cast<double>(sysconf(_SC_PAGESIZE));
    *what = "this machine has " + figure(limit);
    if (const double c = cgroup_limit(); c < limit) {
        limit = c;
        *what = "the cgroup's memory.max is " + figure(c);
    }
    for (const auto &[resource, name] : {std::pair{RLIMIT_AS, "the address-space limit"},
                                         std::pair{RLIMIT_DATA, "the data limit"}}) {
        rlimit rl{};
        if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            static_cast<double>(rl.rlim_cur) < limit) {
            limit = static_cast<double>(rl.rlim_cur);
            *what = std::string(name) + " (ulimit) is " + figure(limit);
        }
    }
    return limit;
}

void check_footprint(const std::string &spec, const TopologySize &s) {
    const double need = model_bytes(s);
    std::string what;
    // Half the limit: the workload, the event queue and the allocator need the rest.
    if (need <= memory_limit(&what) / 2) {
        // Port numbers are 16 bits in the routing tables, one value meaning "no route".
        if (s.max_ports <= 65534) return;
        throw TopologyError("topology '" + spec + "': a router of " + count(s.max_ports, "port") +
                            "; routing tables hold at most 65534");
    }
    throw TopologyError("topology '" + spec + "' needs about " + figure(need) +
                        " of memory to build and route (" + count(s.nodes, "node") + ", " +
                        count(s.routers, "router") + ", " + count(s.links, "link") + "), and " +
                        what + ": choose a smaller one");
}

void check_routing_footprint(const std::string &spec, const Topology &t) {
    if (!make_route_rule(t)) check_footprint(spec, topology_size(t));
}

}  // namespace sansim
