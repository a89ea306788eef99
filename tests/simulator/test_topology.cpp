// Topology files: a hand-written fabric routes and runs; bad files name the line at fault.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

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

std::string run_error(const Topology &t, const WorkloadOptions &w) {
    try {
        run_simulation(t, Params{}, w, 0);
    } catch (const TopologyError &e) {
        return e.what();
    }
    return "";
}

WorkloadOptions trace_of(const std::string &name, const std::string &lines) {
    const auto path = std::filesystem::temp_directory_path() / ("sansim_topology_" + name);
    std::ofstream(path) << lines;
    WorkloadOptions w;
    w.kind = "trace";
    w.trace_path = path.string();
    return w;
}

// A 2-ary 2-fly: sources n0..n3 enter at stage s, sinks n4..n7 leave at stage t; the tables
// route sources to sinks and the responses back, nothing else.
const char *kButterfly =
    "nodes 8\n"
    "router s0 ports 4\nrouter s1 ports 4\nrouter t0 ports 4\nrouter t1 ports 4\n"
    "link n0 s0.0\nlink n1 s0.1\nlink n2 s1.0\nlink n3 s1.1\n"
    "link n4 t0.0\nlink n5 t0.1\nlink n6 t1.0\nlink n7 t1.1\n"
    "link s0.2 t0.2\nlink s0.3 t1.2\nlink s1.2 t0.3\nlink s1.3 t1.3\n"
    "routing table\n"
    "route s0 n4 2\nroute s0 n5 2\nroute s0 n6 3\nroute s0 n7 3\n"
    "route s1 n4 2\nroute s1 n5 2\nroute s1 n6 3\nroute s1 n7 3\n"
    "route t0 n4 0\nroute t0 n5 1\nroute t1 n6 0\nroute t1 n7 1\n"
    "route t0 n0 2\nroute t0 n1 2\nroute t0 n2 3\nroute t0 n3 3\n"
    "route t1 n0 2\nroute t1 n1 2\nroute t1 n2 3\nroute t1 n3 3\n"
    "route s0 n0 0\nroute s0 n1 1\nroute s1 n2 0\nroute s1 n3 1\n";

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
    // A table without a route to n1: the tables are built, but no traffic may need it.
    const Topology partial = parse_topology(
        "nodes 2\nrouter a ports 2\nlink n0 a.0\nlink n1 a.1\nrouting table\nroute a n0 0\n",
        "t.topo");
    CHECK(compute_routing(partial).hop_count(0, 0, 1) == Routing::kUnreachable);
    WorkloadOptions w;
    w.message_bytes = 1000;
    CHECK_THAT(run_error(partial, w), Catch::Contains("node n1 is unreachable from node n0") &&
                                          Catch::Contains("routing 'table'"));
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
    CHECK_THAT(error_of("nodes 2\nswitch a\n"),
               Catch::Contains("t.topo:2") && Catch::Contains("unknown statement"));
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
    for (const std::string spec :
         {"crossbar:4", "ring:5,2", "mesh:3,4", "torus:4,3", "torus:3,4,3/2", "fattree:3,3",
          "dragonfly:2,2,1", "dual:16", "chain:7"}) {
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

// The rules (fat trees, dragonflies, meshes and tori) against the tables the same fabric gets
// when it is not known as its generator's: every router, phase and destination, every pair.
TEST_CASE("routing rules give the tables' ports and hop counts", "[topology]") {
    struct Case {
        std::string spec, routing, ties;
    };
    const std::vector<Case> cases = {{"fattree:4,3", "", "hash"},
                                     {"fattree:4,3", "", "dmodk"},
                                     {"fattree:4,3,2", "", "hash"},
                                     {"fattree:4,3,4", "", "dmodk"},
                                     {"fattree:3,4", "", "hash"},
                                     {"fattree:5,1", "", "hash"},
                                     {"dragonfly:4,2,2", "minimal", ""},
                                     {"dragonfly:4,2,2", "valiant", ""},
                                     {"dragonfly:4,2,2,3", "minimal", ""},
                                     {"dragonfly:3,2,2,2", "minimal", ""},
                                     {"dragonfly:2,3,4,5", "minimal", ""},
                                     {"mesh:5,3/2", "", ""},
                                     {"torus:4,5/2", "xy", ""},
                                     {"torus:6,2", "xy", ""},
                                     {"torus:5,1", "xy", ""},
                                     {"torus:7", "xy", ""},
                                     {"mesh:3,2,4", "", ""},
                                     {"torus:4,3,5/2", "xy", ""},
                                     {"torus:4,4,4", "xy", ""},
                                     {"torus:2,6,1", "xy", ""}};
    for (const Case &c : cases)
        for (int fabrics : {1, 2}) {
            INFO(c.spec << " routing '" << c.routing << "' ties '" << c.ties << "' fabrics "
                        << fabrics);
            Topology t = make_topology(c.spec, fabrics);
            if (!c.routing.empty()) t.routing = c.routing;
            if (!c.ties.empty()) t.ties = c.ties;
            const Routing rule = compute_routing(t);
            REQUIRE(rule.rule != nullptr);
            REQUIRE(rule.table.empty());
            t.generator.clear();
            const Routing table = compute_routing(t);
            REQUIRE(table.rule == nullptr);
            const int n = t.nodes;
            for (int r = 0; r < static_cast<int>(t.routers.size()); ++r)
                for (int ph = 0; ph < 2; ++ph)
                    for (int d = 0; d < n; ++d)
                        REQUIRE(rule.port(r, ph, d) == table.port(r, ph, d));
            for (int f = 0; f < t.fabrics; ++f)
                for (int s = 0; s < n; ++s)
                    for (int d = 0; d < n; ++d)
                        REQUIRE(rule.hop_count(f, s, d) == table.hop_count(f, s, d));
        }
    // A generated fabric rewired by hand is routed by tables.
    Topology cut = make_topology("fattree:4,2", 1);
    std::swap(cut.links[0].b, cut.links[1].b);
    CHECK(compute_routing(cut).rule == nullptr);
}

TEST_CASE("a 3-D torus's hop counts are its rings' shorter ways, summed", "[topology]") {
    // torus:5,4,3/2 under dimension order: 60 routers, two nodes each; a router is crossed per
    // ring step plus the destination's own.
    Topology t = make_topology("torus:5,4,3/2", 1);
    t.routing = "xy";
    CHECK(t.nodes == 120);
    CHECK(t.routers.size() == 60);
    const Routing r = compute_routing(t);
    REQUIRE(r.rule != nullptr);
    const int size[3] = {5, 4, 3};
    for (int s = 0; s < t.nodes; ++s)
        for (int d = 0; d < t.nodes; ++d) {
            int rs = s / 2, rd = d / 2, expect = 1;
            for (int k = 0; k < 3; ++k) {
                const int ahead = (rd % size[k] - rs % size[k] + size[k]) % size[k];
                expect += std::min(ahead, size[k] - ahead);
                rs /= size[k];
                rd /= size[k];
            }
            INFO("n" << s << " to n" << d);
            REQUIRE(r.hop_count(0, s, d) == expect);
        }
    // The farthest pair: 2 + 2 + 1 ring steps.
    CHECK(r.hop_count(0, 0, 2 * (2 + 5 * (2 + 4 * 1))) == 6);
}

TEST_CASE("only the pairs traffic uses must be connected", "[topology]") {
    // Two routers without a link between them: traffic within each half runs, across is refused.
    const Topology split = parse_topology(
        "nodes 4\nrouter a ports 2\nrouter b ports 2\nlink n0 a.0\nlink n1 a.1\n"
        "link n2 b.0\nlink n3 b.1\n",
        "split.topo");
    const WorkloadOptions halves = trace_of("halves", "0 0 1 4096 write\n0 3 2 4096 read\n");
    const Results r = run_simulation(split, Params{}, halves, 0);
    CHECK(r.complete);
    CHECK(r.payload_delivered == 8192);
    CHECK_THAT(run_error(split, trace_of("across", "0 0 1 64 write\n5 1 3 64 write\n")),
               Catch::Contains("node n3 is unreachable from node n1") &&
                   Catch::Contains("split.topo") && Catch::Contains("sends from n1 to n3"));
    // The butterfly: every source reaches every sink, sinks do not reach each other.
    const Topology fly = parse_topology(kButterfly, "fly.topo");
    const Results f = run_simulation(fly, Params{},
                                     trace_of("fly",
                                              "0 0 4 4096 write\n0 1 7 4096 write\n"
                                              "0 2 5 4096 read\n0 3 6 4096 write\n"),
                                     0);
    CHECK(f.complete);
    CHECK(f.payload_delivered == 4 * 4096);
    CHECK(f.mean_hops == Approx(2.0));
    CHECK_THAT(run_error(fly, trace_of("sinks", "0 4 6 64 write\n")),
               Catch::Contains("node n6 is unreachable from node n4"));
    // Without the routes back to s0's sources, their requests would never be answered.
    std::string one_way = kButterfly;
    one_way.resize(one_way.find("route t0 n0"));
    CHECK_THAT(
        run_error(parse_topology(one_way, "oneway.topo"), trace_of("oneway", "0 0 4 64 write\n")),
        Catch::Contains("node n0 is unreachable from node n4") && Catch::Contains("responses"));
}

TEST_CASE("topology specs and routing rules say what they need", "[topology]") {
    const std::string path = (std::filesystem::temp_directory_path() / "sansim_two.topo").string();
    std::ofstream(path) << "nodes 2\nrouter a ports 2\nlink n0 a.0\nlink n1 a.1\n";
    CHECK(make_topology("file:" + path, 1).nodes == 2);
    CHECK(make_topology(path, 1).nodes == 2);
    CHECK_THROWS_WITH(make_topology("file:/nonexistent/x.topo", 1),
                      Catch::Contains("/nonexistent/x.topo: cannot open"));
    // Dimension order without coordinates would quietly be shortest-path routing.
    CHECK_THAT(error_of("nodes 2\nrouter a ports 2 at 0 0\nrouter b ports 2\nlink n0 a.0\n"
                        "link n1 b.0\nlink a.1 b.1\nrouting xy\n"),
               Catch::Contains("t.topo:3") && Catch::Contains("routing 'xy' needs coordinates") &&
                   Catch::Contains("router 'b'"));
    CHECK(error_of("nodes 2\nrouter a ports 2 at 0 0\nrouter b ports 2 at 1 0\nlink n0 a.0\n"
                   "link n1 b.0\nlink a.1 b.1\nrouting xy\n")
              .empty());
    // A third coordinate places a router in z.
    const Topology z = parse_topology(
        "nodes 2\nrouter a ports 2 at 0 0 0\nrouter b ports 2 at 0 0 1\n"
        "link n0 a.0\nlink n1 b.0\nlink a.1 b.1\nrouting xy\n",
        "z.topo");
    CHECK(z.routers[1].z == 1);
    CHECK(compute_routing(z).hop_count(0, 0, 1) == 2);
    Topology xbar = make_topology("crossbar:4", 1);
    xbar.routing = "xy";
    CHECK_THROWS_WITH(compute_routing(xbar), Catch::Contains("needs coordinates"));
    Topology mesh = make_topology("mesh:3,2", 1);
    mesh.routing = "xy";
    CHECK(compute_routing(mesh).hop_count(0, 0, 5) == 4);
}

TEST_CASE("a generator's size is known before it is built", "[topology]") {
    // The memory check counts from the arguments; the counts must be the generators' own.
    const std::vector<std::pair<std::string, std::vector<int>>> specs = {
        {"crossbar", {16}},          {"ring", {5, 3}},        {"mesh", {2, 4, 3}},
        {"torus", {1, 5, 4}},        {"torus", {3, 4, 3, 5}}, {"mesh", {1, 6}},
        {"fattree", {4, 3}},         {"fattree", {4, 3, 2}},  {"dragonfly", {4, 2, 2}},
        {"dragonfly", {4, 2, 2, 5}}, {"dual", {64}},          {"chain", {3}}};
    for (int fabrics : {1, 2})
        for (const auto &[name, args] : specs) {
            std::ostringstream spec;
            spec << name;
            if (name == "mesh" || name == "torus") {  // {per, sizes...}: "mesh:X,Y/PER"
                for (std::size_t i = 1; i < args.size(); ++i)
                    spec << (i > 1 ? ',' : ':') << args[i];
                spec << '/' << args[0];
            } else {
                for (std::size_t i = 0; i < args.size(); ++i) spec << (i ? ',' : ':') << args[i];
            }
            if (fabrics == 2 && (name == "dual" || name == "chain")) continue;
            INFO(spec.str() << " on " << fabrics << " fabrics");
            const TopologySize guess = generator_size(name, args, name == "dual" ? 2 : fabrics);
            const TopologySize real = topology_size(make_topology(spec.str(), fabrics));
            CHECK(guess.nodes == real.nodes);
            CHECK(guess.routers == real.routers);
            CHECK(guess.ports == real.ports);
            CHECK(guess.max_ports == real.max_ports);
            CHECK(guess.links >= real.links);
            CHECK(guess.links <= 1.5 * real.links);
        }
}

TEST_CASE("a topology too big for memory is refused with the figure", "[topology]") {
    // Counted, not built: no allocation depends on these sizes.
    const TopologySize huge = generator_size("crossbar", {1000000000}, 1);
    // A crossbar's waiting lists alone are nodes squared: room for every input on each output.
    CHECK(model_bytes(huge) > 1e18);
    CHECK_THROWS_WITH(check_footprint("crossbar:1000000000", huge),
                      Catch::Contains("needs about 14 EiB of memory") &&
                          Catch::Contains("1000000000 nodes, 1 router, 1000000000 links"));
    const TopologySize torus = generator_size("torus", {1, 100000, 100000}, 1);
    CHECK(torus.nodes == 1e10);
    CHECK_FALSE(torus.tables);  // dimension order is a rule: memory grows with the fabric
    CHECK(model_bytes(torus) < 1e15);
    CHECK_THROWS_WITH(check_footprint("torus:100000,100000", torus),
                      Catch::Contains("needs about") && Catch::Contains("choose a smaller one"));
    // The 1,024-node benchmark's fat tree is a few MB.
    CHECK(model_bytes(generator_size("fattree", {4, 5}, 1)) < 20e6);
    CHECK_NOTHROW(check_footprint("fattree:4,5", generator_size("fattree", {4, 5}, 1)));
}
