// Topology files: a hand-written fabric routes and runs; bad files name the line at fault.
#include <catch2/catch.hpp>

#include "app/run.hpp"
#include "topology/routing.hpp"

using namespace sansim;

namespace {

std::string error_of(const std::string &text) {
    try {
        compute_routing(parse_topology(text, "t.topo"));
    } catch (const TopologyError &e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a hand-written two-router fabric routes and runs", "[topology]") {
    const std::string text =
        "# two routers, two nodes each\n"
        "nodes 4\n"
        "router a ports 3\n"
        "router b ports 3\n"
        "link n0 a.0\n"
        "link n1 a.1\n"
        "link n2 b.0\n"
        "link n3 b.1 delay_ns 20\n"
        "link a.2 b.2 mbps 100\n";
    const Topology t = parse_topology(text, "t.topo");
    const Routing r = compute_routing(t);
    CHECK(r.hop_count(0, 0, 1) == 1);
    CHECK(r.hop_count(0, 0, 3) == 2);
    WorkloadOptions w;
    w.message_bytes = 1000;
    const Results res = run_simulation(t, Params{}, w, 0);
    CHECK(res.complete);
    CHECK(res.payload_delivered == 12 * 1000);
}

TEST_CASE("explicit route tables are used and checked", "[topology]") {
    std::string text =
        "nodes 2\nrouter a ports 2\nlink n0 a.0\nlink n1 a.1\nrouting table\n"
        "route a n0 0\nroute a n1 1\n";
    CHECK(compute_routing(parse_topology(text, "t.topo")).hop_count(0, 0, 1) == 1);
    CHECK_THAT(error_of("nodes 2\nrouter a ports 2\nlink n0 a.0\nlink n1 a.1\nrouting table\n"
                        "route a n0 0\n"),
               Catch::Contains("unreachable"));
}

TEST_CASE("bad topology files name the line", "[topology]") {
    CHECK_THAT(error_of("nodes 2\nrouter a ports 2\nlink n0 b.0\n"),
               Catch::Contains("t.topo:3") && Catch::Contains("undefined router 'b'"));
    CHECK_THAT(error_of("nodes 3\nrouter a ports 2\nlink n0 a.0\nlink n1 a.0\n"),
               Catch::Contains("t.topo:4") && Catch::Contains("already connected") &&
                   Catch::Contains("line 3"));
    CHECK_THAT(error_of("nodes 2\nrouter a ports 2\nlink n0 a.0\nlink n1 a.7\n"),
               Catch::Contains("t.topo:4") && Catch::Contains("out of range"));
    CHECK_THAT(error_of("nodes 3\nrouter a ports 2\nlink n0 a.0\nlink n1 a.1\n"),
               Catch::Contains("t.topo:1") && Catch::Contains("n2.x is not connected"));
    CHECK_THAT(error_of("nodes 4\nrouter a ports 2\nrouter b ports 2\nlink n0 a.0\nlink n1 a.1\n"
                        "link n2 b.0\nlink n3 b.1\n"),
               Catch::Contains("unreachable"));
    CHECK_THAT(error_of("nodes 2\nswitch a\n"), Catch::Contains("t.topo:2") &&
                                                    Catch::Contains("unknown statement"));
    CHECK_THAT(error_of("nodes 2\nrouter a ports six\n"), Catch::Contains("t.topo:2"));
    CHECK_THAT(error_of("nodes 2\nrouter a ports 2\nrouter c ports 1\nlink n0 a.0\nlink n1 a.1\n"),
               Catch::Contains("t.topo:3") && Catch::Contains("no links"));
    CHECK_THAT(error_of("# nothing\n"), Catch::Contains("no 'nodes' line"));
}

TEST_CASE("generators build what they promise", "[topology]") {
    const Topology ft = make_fat_tree(4, 3, 1);
    CHECK(ft.nodes == 64);
    CHECK(ft.routers.size() == 48);
    const Routing rft = compute_routing(ft);
    CHECK(rft.hop_count(0, 0, 1) == 1);   // same leaf
    CHECK(rft.hop_count(0, 0, 63) == 5);  // through the top
    const Topology dual = make_dual_fabric(64);
    CHECK(dual.routers.size() == 48);  // as the Sandia cluster: 48 six-port routers
    const Routing rd = compute_routing(dual);
    int shorter_in_y = 0, differ = 0;
    for (int s = 0; s < 64; ++s)
        for (int d = 0; d < 64; ++d)
            if (s != d) {
                differ += rd.hop_count(0, s, d) != rd.hop_count(1, s, d);
                shorter_in_y += rd.hop_count(1, s, d) < rd.hop_count(0, s, d);
            }
    CHECK(differ > 64 * 63 / 2);  // asymmetric: most pairs differ in path length
    CHECK(shorter_in_y > 0);
    CHECK(make_dragonfly(2, 2, 1, 1).nodes == 3 * 2 * 2);
    CHECK_THROWS_AS(make_topology("fattree:4", 1), TopologyError);
    CHECK_THROWS_AS(make_topology("nosuch:4", 1), TopologyError);
    CHECK_THROWS_AS(make_topology("/nonexistent/file.topo", 1), TopologyError);
}

TEST_CASE("hop counts are the routers a packet crosses following the tables", "[topology]") {
    for (const std::string spec : {"crossbar:4", "ring:5,2", "mesh:3,4,1", "torus:4,3,1",
                                   "fattree:3,3", "dragonfly:2,2,1", "dual:16", "chain:7"}) {
        for (int fabrics : {1, 2}) {
            INFO(spec << " fabrics " << fabrics);
            const Topology t = make_topology(spec, fabrics);
            const Routing r = compute_routing(t);
            const int n = t.nodes;
            for (int f = 0; f < t.fabrics; ++f)
                for (int s = 0; s < n; ++s)
                    for (int d = 0; d < n; ++d) {
                        if (s == d) continue;
                        const PortPeer &first =
                            r.peers[static_cast<std::size_t>(s)][static_cast<std::size_t>(f)];
                        int router = first.dev - n, phase = 0, hops = 0;
                        for (;;) {
                            ++hops;
                            const std::uint16_t p = r.port(router, phase, d);
                            REQUIRE(p != Routing::kNone);
                            const PortPeer &next = r.peers[static_cast<std::size_t>(n + router)][p];
                            if (next.dev < n) {
                                REQUIRE(next.dev == d);
                                break;
                            }
                            phase |= r.to_phase1[static_cast<std::size_t>(router)][p];
                            router = next.dev - n;
                            REQUIRE(hops < 250);
                        }
                        REQUIRE(static_cast<int>(r.hop_count(f, s, d)) == hops);
                    }
        }
    }
}
