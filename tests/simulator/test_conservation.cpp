// Every injected byte is delivered exactly once and nothing deadlocks, on every built-in
// topology with its default routing, for the message workloads and raw reads and writes.
#include <catch2/catch.hpp>

#include "app/run.hpp"

using namespace sansim;

TEST_CASE("all-to-all on every built-in topology delivers every byte once", "[conservation]") {
    const std::vector<std::pair<std::string, int>> topologies = {
        {"crossbar:8", 1},  {"ring:6,2", 1},        {"mesh:3,3", 1},    {"torus:3,4", 1},
        {"fattree:2,3", 1}, {"dragonfly:2,2,1", 1}, {"dual:16", 2},     {"torus:4,4", 2},
        {"fattree:4,2", 2}, {"mesh:4,2/2", 2},      {"torus:3,2,3", 1}, {"mesh:2,2,2/2", 2},
    };
    for (const auto &[spec, fabrics] : topologies) {
        for (bool restricted : {false, true}) {
            INFO(spec << " fabrics " << fabrics << (restricted ? " restricted" : " unrestricted"));
            const Topology topo = make_topology(spec, fabrics);
            WorkloadOptions w;
            w.kind = "alltoall";
            w.message_bytes = 3000;  // not a multiple of the 64-byte payload
            w.messages.transfer_bytes = 1024;
            w.messages.restricted = restricted;
            w.rounds = 2;
            const Results r = run_simulation(topo, Params{}, w, 0);
            const auto n = static_cast<std::uint64_t>(topo.nodes);
            CHECK_FALSE(r.deadlock);
            CHECK(r.complete);
            CHECK(r.payload_injected == n * (n - 1) * 3000 * 2);
            CHECK(r.payload_delivered == r.payload_injected);
            CHECK(r.duplicates == 0);
            CHECK(r.message_latency.count == n * (n - 1) * 2);
        }
    }
}

TEST_CASE("reads, writes and the other workloads conserve bytes", "[conservation]") {
    const Topology topo = make_topology("dual:16", 1);
    for (const std::string kind : {"permutation", "hotspot", "pingpong"}) {
        INFO(kind);
        WorkloadOptions w;
        w.kind = kind;
        w.message_bytes = 5000;
        w.rounds = 3;
        w.hot_fraction = 0.5;
        const Results r = run_simulation(topo, Params{}, w, 0);
        CHECK_FALSE(r.deadlock);
        CHECK(r.complete);
        CHECK(r.payload_delivered == r.payload_injected);
        CHECK(r.payload_injected == (kind == "pingpong" ? 2u : 16u) * 3 * 5000);
    }
    // Phase-3b mix of reads and writes, open loop: what finished was delivered once.
    WorkloadOptions w;
    w.kind = "phase3b";
    w.transfer_bytes = 4096;
    w.requests_per_s = 4700;
    Params p;
    p.disk_mbps = 8;
    const Results r = run_simulation(topo, p, w, 2 * kMs);
    CHECK_FALSE(r.deadlock);
    CHECK(r.duplicates == 0);
    CHECK(r.payload_delivered <= r.payload_injected);
    CHECK(r.transfer_latency.count > 50);
    CHECK(r.mean_or_exhausted >= 0.0);
    CHECK(r.mean_or_exhausted <= 1.0);
}

// The event loop's deep prefetch stages read ahead through indices that may be stale by the time
// the event runs (freed packets, a disk burst's packet 0); they must never change a result, and
// under AddressSanitizer never read outside the model.
TEST_CASE("deep and light prefetching give the same run", "[conservation]") {
    struct Case {
        std::string topology, kind, routing, vl_rule;
        int vls;
        FlowControl flow;
    };
    const std::vector<Case> cases = {
        {"fattree:4,3", "alltoall", "", "", 1, FlowControl::packet},
        {"dragonfly:4,2,2", "openloop", "valiant", "group", 3, FlowControl::packet},
        {"torus:4,4,4", "openloop", "xy", "dateline", 2, FlowControl::credit},
        {"dual:16", "phase3b", "", "", 1, FlowControl::packet},
    };
    for (const Case &c : cases) {
        INFO(c.topology << " " << c.kind);
        Topology topo = make_topology(c.topology, 1);
        if (!c.routing.empty()) topo.routing = c.routing;
        if (!c.vl_rule.empty()) topo.vl_rule = c.vl_rule;
        WorkloadOptions w;
        w.kind = c.kind;
        w.message_bytes = 3000;
        w.load = 0.5;
        w.transfer_bytes = 4096;
        w.requests_per_s = 4700;
        Params p;
        p.vls = c.vls;
        p.flow_control = c.flow;
        if (c.kind == "phase3b") p.disk_mbps = 8;
        const Time limit = c.kind == "alltoall" ? 0 : 200 * kUs;
        p.prefetch = Prefetch::light;
        const Results light = run_simulation(topo, p, w, limit);
        p.prefetch = Prefetch::deep;
        const Results deep = run_simulation(topo, p, w, limit);
        CHECK(light.events > 1000);
        CHECK(deep.events == light.events);
        CHECK(deep.packets == light.packets);
        CHECK(deep.payload_delivered == light.payload_delivered);
        CHECK(deep.packet_rtt.mean_us == light.packet_rtt.mean_us);
        CHECK(deep.packet_rtt.max_us == light.packet_rtt.max_us);
    }
}
