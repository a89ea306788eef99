// Fuzz target: sansim's topology file parser, and the routing tables built from
// what it accepts (the file's only consumer checks the wiring there).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "topology/routing.hpp"
#include "topology/topology.hpp"

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_topology: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    sansim::Topology t;
    try {
        t = sansim::parse_topology(text, "fuzz.topo");
    } catch (const sansim::TopologyError &e) {
        if (std::string(e.what()).rfind("fuzz.topo", 0) != 0)
            broken("an error without the file name");
        return 0;
    }
    if (t.nodes < 1 || t.fabrics < 1 || t.fabrics > 2) broken("an impossible fabric accepted");
    for (const auto &l : t.links) {
        // 0 and -1: the model's defaults; anything else must be a figure it can time.
        if (l.mbps != 0 && !(l.mbps >= 0.001 && l.mbps <= 1e6))
            broken("a link bandwidth the model cannot time accepted");
        if (l.delay_ns != -1 && !(l.delay_ns >= 0 && l.delay_ns <= 1e9))
            broken("a link delay the model cannot time accepted");
        for (const auto &e : {l.a, l.b})
            if (e.dev < 0 || e.dev >= t.devices() || e.port < 0 || e.port >= t.ports_of(e.dev))
                broken("a link end outside the fabric accepted");
    }
    // Tables grow with nodes^2: past a few hundred nodes they test memory, not code.
    if (t.nodes > 256 || t.routers.size() > 256) return 0;
    try {
        sansim::Routing r = sansim::compute_routing(t);
        if (r.nodes != t.nodes) broken("routing for another fabric");
    } catch (const sansim::TopologyError &) {
    }
    return 0;
}
