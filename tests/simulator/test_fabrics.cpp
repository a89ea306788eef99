// Today's fabrics: InfiniBand-style credit flow control per virtual lane, lanes that break a
// torus's cycles at its datelines, link rates in Gb/s, oversubscribed fat trees, and
// dragonflies under minimal and Valiant routing. Every run has a fixed seed and is judged
// by simulated time and counts, never by wall time.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>

#include "app/options.hpp"
#include "app/run.hpp"
#include "model/network.hpp"
#include "topology/routing.hpp"
#include "traffic/pattern.hpp"

using namespace sansim;

namespace {

struct FabricSink : TransferClient {
    int done = 0;
    Time last = 0;
    void transfer_done(Network &net, std::uint32_t, std::uint64_t) override {
        ++done;
        last = net.now();
    }
};

Params fabric_theory() {
    Params p;
    p.pci_mbps = 0;  // ideal endpoints
    p.acks = AckPath::none;
    return p;
}

Params credits(int vls, int lane_bytes) {
    Params p = fabric_theory();
    p.flow_control = FlowControl::credit;
    p.vls = vls;
    p.vl_buffer_bytes = lane_bytes;
    return p;
}

Results open_loop(Topology t, const Params &p, const std::string &pattern, double load,
                  double warmup_us, double measure_us, double limit_us = 0) {
    WorkloadOptions w;
    w.kind = "openloop";
    w.pattern = pattern;
    w.load = load;
    Measurement m;
    m.warmup_us = warmup_us;
    m.measure_us = measure_us;
    return run_simulation(t, p, w, limit_us > 0 ? from_us(limit_us) : 0, m);
}

Topology with_rules(const std::string &spec, const std::string &routing, const std::string &vl_rule,
                    const std::string &ties = "hash") {
    Topology t = make_topology(spec, 1);
    t.routing = routing;
    t.vl_rule = vl_rule;
    t.ties = ties;
    return t;
}

// Routers whose groups differ along the table's path from s to d: the global links crossed.
int global_hops(const Topology &t, const Routing &rt, int s, int d) {
    int r = rt.peers[static_cast<std::size_t>(s)][0].dev - t.nodes, phase = 0, crossed = 0;
    for (int hops = 0; hops < 64; ++hops) {
        const std::uint16_t port = rt.port(r, phase, d);
        const PortPeer &next = rt.peers[static_cast<std::size_t>(t.nodes + r)][port];
        if (t.is_node(next.dev)) return next.dev == d ? crossed : -1;
        phase |= rt.to_phase1[static_cast<std::size_t>(r)][port];
        const int v = next.dev - t.nodes;
        crossed += t.routers[static_cast<std::size_t>(r)].group !=
                   t.routers[static_cast<std::size_t>(v)].group;
        r = v;
    }
    return -1;
}

}  // namespace

TEST_CASE("a credit loop longer than the buffer limits a stream to buffer per round trip",
          "[fabrics]") {
    // chain:1, n0 -> router -> n1, 64-byte writes (80 bytes on the wire, two 64-byte credits
    // each), 5 us cables. A packet's credits leave the sender as it starts and come back when
    // its head has crossed the cable (5 us), the router (0.3 us), its tail has left (1.6 us at
    // 20 ns/byte) and the credit has crossed the cable back (5 us): 11.9 us. A 256-byte lane
    // holds two packets, so two packets per 11.9 us: 10.76 MB/s of payload. Under packet flow
    // control the sender sees the room at once and counts bytes, not credits: three packets
    // per 6.9 us, 27.83 MB/s.
    auto stream_mbps = [](FlowControl fc) {
        Params p = fabric_theory();
        p.flow_control = fc;
        p.vl_buffer_bytes = 256;
        p.link_delay_ns = 5000;
        Network net(make_chain(1), p);
        FabricSink sink;
        const std::uint64_t bytes = 64 * 2000;
        net.start_transfer(0, 1, bytes, false, &sink, 0);
        net.run(kForever);
        REQUIRE(sink.done == 1);
        CHECK(net.stats().buffer_overflows == 0);
        CHECK(net.stats().payload_delivered == bytes);
        return static_cast<double>(bytes) / to_seconds(sink.last) / 1e6;
    };
    CHECK(stream_mbps(FlowControl::credit) == Approx(2 * 64 / 11.9).epsilon(0.01));
    CHECK(stream_mbps(FlowControl::packet) == Approx(3 * 64 / 6.9).epsilon(0.01));
}

TEST_CASE("credit flow control never overflows a lane's buffer and loses nothing", "[fabrics]") {
    // All-to-all on a torus with dimension order and dateline lanes, one packet per lane
    // buffer (80 bytes in 64-byte credits take 128): the buffers fill to the brim, never past
    // it, and every byte arrives once.
    Topology t = with_rules("torus:4,4", "xy", "dateline");
    WorkloadOptions w;
    w.kind = "alltoall";
    w.message_bytes = 4096;
    Params p = credits(2, 128);
    const Results r = run_simulation(t, p, w, 0);
    CHECK(r.complete);
    CHECK_FALSE(r.deadlock);
    CHECK(r.payload_delivered == 16 * 15 * 4096);
    CHECK(r.payload_injected == r.payload_delivered);
    CHECK(r.duplicates == 0);
    CHECK(r.lanes_reported);
    CHECK(r.buffer_overflows == 0);
    CHECK(r.peak_buffer_bytes == 128);

    // Bigger buffers, three lanes of 1 KiB: still within them, and they do fill.
    const Results big = run_simulation(t, credits(3, 1024), w, 0);
    CHECK(big.complete);
    CHECK(big.buffer_overflows == 0);
    CHECK(big.peak_buffer_bytes <= 1024);
    CHECK(big.peak_buffer_bytes > 512);
    CHECK(big.payload_delivered == r.payload_delivered);
}

TEST_CASE("dateline lanes keep a torus under dimension order out of deadlock", "[fabrics]") {
    // torus:6,6, dimension-order routing, uniform traffic at full load, credit flow control
    // with one-packet lane buffers. Its rings are cycles of channels: with one lane, or with
    // two and nothing to choose between them, they deadlock and the stall detection says so.
    // With the dateline rule (lane 1 after a ring's wrap-around link, lane 0 again in the next
    // dimension) the same load runs the whole 10 ms.
    const double limit_us = 10000;
    for (const auto &[vls, rule] : {std::pair{1, "none"}, {2, "none"}}) {
        INFO(vls << " lanes, rule " << rule);
        const Results r = open_loop(with_rules("torus:6,6", "xy", rule), credits(vls, 128),
                                    "uniform", 1.0, 0, 0, limit_us);
        CHECK(r.stalled);
        CHECK(r.deadlock);
        CHECK(r.sim_time_us < limit_us);
        CHECK(r.buffer_overflows == 0);
    }
    const Results r = open_loop(with_rules("torus:6,6", "xy", "dateline"), credits(2, 128),
                                "uniform", 1.0, 0, 0, limit_us);
    CHECK_FALSE(r.stalled);
    CHECK_FALSE(r.deadlock);
    CHECK(r.sim_time_us == Approx(limit_us));
    CHECK(r.buffer_overflows == 0);
    CHECK(r.throughput_fraction > 0.2);

    // The same in three dimensions: torus:4,4,4 (64 routers, rings of 4 in x, y and z).
    const double short_us = 2000;
    const Results one = open_loop(with_rules("torus:4,4,4", "xy", "none"), credits(1, 128),
                                  "uniform", 1.0, 0, 0, short_us);
    CHECK(one.deadlock);
    const Results cube = open_loop(with_rules("torus:4,4,4", "xy", "dateline"), credits(2, 128),
                                   "uniform", 1.0, 0, 0, short_us);
    CHECK_FALSE(cube.deadlock);
    CHECK(cube.sim_time_us == Approx(short_us));
    CHECK(cube.buffer_overflows == 0);
    CHECK(cube.throughput_fraction > 0.2);
}

TEST_CASE("the dateline rule needs two lanes and coordinates", "[fabrics]") {
    auto error_of = [](const Topology &t, const Params &p) -> std::string {
        try {
            Network net(t, p);
        } catch (const TopologyError &e) {
            return e.what();
        }
        return "";
    };
    CHECK(error_of(with_rules("torus:4,4", "xy", "dateline"), credits(1, 128))
              .find("needs 2 virtual lanes") != std::string::npos);
    CHECK(error_of(with_rules("ring:4", "updown", "dateline"), credits(2, 128))
              .find("needs coordinates") != std::string::npos);
    CHECK(error_of(with_rules("dragonfly:2,1,1", "valiant", "group"), credits(2, 128))
              .find("needs 3 virtual lanes") != std::string::npos);
    CHECK(error_of(with_rules("torus:4,4", "xy", "dateline"), credits(2, 100))
              .find("must hold one whole packet (128 bytes in 64-byte credits)") !=
          std::string::npos);
    CHECK(error_of(with_rules("torus:4,4", "xy", "dateline"), credits(2, 128)).empty());
}

TEST_CASE("zero-load serialization time is bytes over the link rate, 10 to 400 Gb/s", "[fabrics]") {
    // One 64-byte write over chain:1 (two links, one router): 80 bytes at the link rate, two
    // cable delays and the switch delay, to the picosecond; and a stream of 10,000 such packets
    // leaves back to back, its last arriving that latency after the first 9,999 have been sent
    // (payload at 64/80 of the rate), given a buffer that covers the loop (at 400 Gb/s, 50
    // bytes a nanosecond for 5 + 100 + 1.6 ns: 5.3 KB).
    for (const double gbps : {10.0, 25.0, 40.0, 100.0, 200.0, 400.0}) {
        INFO(gbps << " Gb/s");
        Params p = fabric_theory();
        p.link_mbps = gbps * 125;  // what --link-gbps sets
        p.link_delay_ns = 5;
        p.hop_latency_ns = 100;
        p.fifo_bytes = 16384;
        const Time ps_per_byte = static_cast<Time>(8000 / gbps);  // 8 bits per byte
        {
            Network net(make_chain(1), p);
            FabricSink sink;
            net.start_transfer(0, 1, 64, false, &sink, 0);
            net.run(kForever);
            REQUIRE(sink.done == 1);
            CHECK(sink.last == 80 * ps_per_byte + 2 * 5 * kNs + 100 * kNs);
        }
        {
            Network net(make_chain(1), p);
            FabricSink sink;
            const int packets = 10000;
            net.start_transfer(0, 1, 64 * packets, false, &sink, 0);
            net.run(kForever);
            CHECK(sink.last == packets * 80 * ps_per_byte + 2 * 5 * kNs + 100 * kNs);
        }
    }
}

TEST_CASE("link rates, delays and flow control come from a topology file", "[fabrics]") {
    const Topology t = parse_topology(
        "nodes 2\n"
        "defaults gbps 100 delay_ns 5 switch_ns 90\n"
        "flow_control credit vls 2 vl_buffer_bytes 4096 credit_bytes 64\n"
        "router a ports 2\n"
        "link n0 a.0\n"
        "link n1 a.1 gbps 400 delay_ns 2\n",
        "rates.topo");
    CHECK(t.defaults.link_mbps == 12500);
    CHECK(t.defaults.hop_latency_ns == 90);
    CHECK(t.links[1].mbps == 50000);
    // The file's figures where the command line gives none; the command line's otherwise.
    CommandLine cl;
    cl.given.insert("--vls");
    cl.params.vls = 4;
    Topology applied = t;
    apply_topology_settings(applied, cl);
    CHECK(cl.params.link_mbps == 12500);
    CHECK(cl.params.link_delay_ns == 5);
    CHECK(cl.params.hop_latency_ns == 90);
    CHECK(cl.params.flow_control == FlowControl::credit);
    CHECK(cl.params.vl_buffer_bytes == 4096);
    CHECK(cl.params.vls == 4);
    Network net(applied, cl.params);
    std::set<std::uint32_t> rates;
    for (std::size_t i = 0; i < net.link_channels(); ++i)
        rates.insert(net.link_channel(i).ps_per_byte);
    CHECK(rates == std::set<std::uint32_t>{80, 20});  // 100 and 400 Gb/s
    for (const char *bad : {"nodes 2\ndefaults gbps\n", "nodes 2\nflow_control window\n",
                            "nodes 2\nflow_control credit credit_bytes 48\n",
                            "nodes 2\nvl_rule ladder\n", "nodes 2\ndefaults gbps 100 hops 2\n"}) {
        INFO(bad);
        try {
            parse_topology(bad, "bad.topo");
            FAIL("accepted");
        } catch (const TopologyError &e) {
            CHECK(std::string(e.what()).rfind("bad.topo:2: ", 0) == 0);
        }
    }
}

TEST_CASE("next_group and remote destinations", "[fabrics]") {
    std::mt19937_64 rng(3);
    // Six nodes in three groups of two (on routers 0, 0, 1, 1, 2, 2).
    const std::vector<int> groups = {4, 4, 7, 7, 9, 9}, routers = {0, 0, 1, 1, 2, 2};
    DestinationPattern next("next_group", 6, false, 0, rng, groups, routers);
    DestinationPattern remote("remote", 6, false, 0, rng, groups, routers);
    std::map<int, std::set<int>> seen_next, seen_remote;
    for (int i = 0; i < 600; ++i)
        for (int s = 0; s < 6; ++s) {
            seen_next[s].insert(next.next(s, rng));
            seen_remote[s].insert(remote.next(s, rng));
        }
    CHECK(seen_next[0] == std::set<int>{2, 3});
    CHECK(seen_next[3] == std::set<int>{4, 5});
    CHECK(seen_next[5] == std::set<int>{0, 1});  // the last group's next is the first
    CHECK(seen_remote[0] == std::set<int>{2, 3, 4, 5});
    CHECK(seen_remote[4] == std::set<int>{0, 1, 2, 3});
    int pairs = 0;
    next.each_pair([&](int s, int d) {
        CHECK(groups[static_cast<std::size_t>(d)] != groups[static_cast<std::size_t>(s)]);
        ++pairs;
    });
    CHECK(pairs == 12);
    CHECK_THROWS_AS(DestinationPattern("next_group", 6, false, 0, rng, {1, 1, 1, 1, 1, 1}),
                    std::invalid_argument);
    CHECK_THROWS_AS(DestinationPattern("next_group", 6, false, 0, rng), std::invalid_argument);
}

TEST_CASE("an oversubscribed fat tree has k/s up links per leaf and 1/s of the routers above",
          "[fabrics]") {
    const Topology full = make_fat_tree(4, 3, 1);
    const Topology half = make_fat_tree(4, 3, 1, 2);
    CHECK(full.nodes == 64);
    CHECK(half.nodes == 64);
    CHECK(full.routers.size() == 3 * 16);
    CHECK(half.routers.size() == 16 + 2 * 8);
    std::map<int, int> up_links;  // leaf router -> links to routers above
    for (const LinkSpec &l : half.links)
        if (!half.is_node(l.a.dev) && !half.is_node(l.b.dev)) {
            for (const Endpoint e : {l.a, l.b})
                if (half.routers[static_cast<std::size_t>(e.dev - half.nodes)].level == 2)
                    ++up_links[e.dev];
        }
    CHECK(up_links.size() == 16);
    for (const auto &[leaf, ups] : up_links) CHECK(ups == 2);
    CHECK_THROWS_AS(make_fat_tree(4, 2, 1, 3), TopologyError);
    CHECK(compute_routing(half).hop_count(0, 0, 63) == 5);
}

TEST_CASE("a 2:1 oversubscribed fat tree saturates near half the full one across the core",
          "[fabrics]") {
    // Uniform traffic to the nodes of other leaf routers (all of it crosses the level above),
    // at full load, d-mod-k routing so every up and down link carries as many destinations.
    // The oversubscribed leaves have half the up links: at most half the injection capacity
    // gets through, and input-queued routers lose as much of it to head-of-line blocking as
    // the full tree loses of its own (measured: 0.577 against 0.322 on 16 nodes, 0.581 against
    // 0.315 on 64).
    for (const auto &[k, n] : {std::pair{4, 2}, {4, 3}}) {
        INFO("k " << k << ", n " << n);
        const std::string spec = "fattree:" + std::to_string(k) + "," + std::to_string(n);
        const Results full = open_loop(with_rules(spec, "updown", "none", "dmodk"), fabric_theory(),
                                       "remote", 1.0, 500, 2000);
        const Results half = open_loop(with_rules(spec + ",2", "updown", "none", "dmodk"),
                                       fabric_theory(), "remote", 1.0, 500, 2000);
        CHECK_FALSE(full.stalled);
        CHECK_FALSE(half.stalled);
        CHECK(half.throughput_fraction < 0.5);
        CHECK(half.throughput_fraction / full.throughput_fraction == Approx(0.5).margin(0.08));
    }
}

TEST_CASE("minimal dragonfly routing crosses one global link, shortest paths may cross two",
          "[fabrics]") {
    const Topology shortest = with_rules("dragonfly:4,2,2", "shortest", "none");
    const Topology minimal = with_rules("dragonfly:4,2,2", "minimal", "none");
    const Routing rs = compute_routing(shortest), rm = compute_routing(minimal);
    int two = 0, most = 0;
    for (int s = 0; s < minimal.nodes; ++s)
        for (int d = 0; d < minimal.nodes; ++d) {
            if (s == d) continue;
            const int m = global_hops(minimal, rm, s, d);
            REQUIRE(m >= 0);
            most = std::max(most, m);
            two += global_hops(shortest, rs, s, d) == 2;
            CHECK(rm.hop_count(0, s, d) <= 4);  // routers: local, global, local links between
        }
    CHECK(most == 1);
    CHECK(two > 0);
    // Fewer groups: dragonfly:4,2,2,5 has a*h = 8 global links per group, two per pair.
    const Topology five = make_topology("dragonfly:4,2,2,5", 1);
    std::map<std::pair<int, int>, int> pairs;
    for (const LinkSpec &l : five.links) {
        if (five.is_node(l.a.dev) || five.is_node(l.b.dev)) continue;
        const int ga = five.routers[static_cast<std::size_t>(l.a.dev - five.nodes)].group;
        const int gb = five.routers[static_cast<std::size_t>(l.b.dev - five.nodes)].group;
        if (ga != gb) ++pairs[{std::min(ga, gb), std::max(ga, gb)}];
    }
    CHECK(pairs.size() == 10);
    for (const auto &[pair, links] : pairs) CHECK(links == 2);
}

TEST_CASE(
    "dragonfly: Valiant beats minimal under adversarial traffic, minimal is faster at low "
    "load",
    "[fabrics]") {
    // dragonfly:4,2,2: 9 groups of 4 routers, 8 nodes a group, one global link between any two
    // groups. Lanes by the group rule: one more per global link (2 for minimal, 3 for Valiant).
    const Topology minimal = with_rules("dragonfly:4,2,2", "minimal", "group");
    const Topology valiant = with_rules("dragonfly:4,2,2", "valiant", "group");
    const Params pm = credits(2, 256), pv = credits(3, 256);
    SECTION("every node sends to the next group: minimal routing has one link for 8 nodes") {
        const Results m = open_loop(minimal, pm, "next_group", 1.0, 500, 2000);
        const Results v = open_loop(valiant, pv, "next_group", 1.0, 500, 2000);
        CHECK_FALSE(m.stalled);
        CHECK_FALSE(v.stalled);
        CHECK(m.throughput_fraction < 1.0 / 8 + 0.01);
        CHECK(v.throughput_fraction > 2 * m.throughput_fraction);
    }
    SECTION("uniform traffic at low load: minimal paths are shorter") {
        const Results m = open_loop(minimal, pm, "uniform", 0.05, 500, 2000);
        const Results v = open_loop(valiant, pv, "uniform", 0.05, 500, 2000);
        CHECK(m.complete);
        CHECK(v.complete);
        CHECK(m.transfer_latency.mean_us < v.transfer_latency.mean_us);
        // Valiant's detour adds at least a global link and a router to most transfers.
        CHECK(v.transfer_latency.mean_us - m.transfer_latency.mean_us > 0.3);
    }
    SECTION("uniform traffic at full load: both run, minimal carries more") {
        const Results m = open_loop(minimal, pm, "uniform", 1.0, 500, 2000);
        const Results v = open_loop(valiant, pv, "uniform", 1.0, 500, 2000);
        CHECK_FALSE(m.stalled);
        CHECK_FALSE(v.stalled);
        CHECK(m.buffer_overflows == 0);
        CHECK(v.buffer_overflows == 0);
        CHECK(m.throughput_fraction > v.throughput_fraction);
    }
}

TEST_CASE("each pair that carried traffic is counted once, whatever its transfers", "[pairs]") {
    // More transfers than the pair log holds before it first sorts itself and drops repeats:
    // 70,000 over a 4-node crossbar's 12 ordered pairs.
    Network net(make_crossbar(4, 1), fabric_theory());
    FabricSink sink;
    std::set<std::pair<int, int>> want;
    for (int i = 0; i < 70000; ++i) {
        const int src = i % 4, dst = (src + 1 + (i / 4) % 3) % 4;
        net.start_transfer(src, dst, 64, false, &sink, 0);
        want.insert({src, dst});
    }
    REQUIRE(want.size() == 12);
    const std::vector<std::pair<int, int>> got = net.used_pairs();
    CHECK(std::vector<std::pair<int, int>>(want.begin(), want.end()) == got);
    net.run(kForever);
    CHECK(sink.done == 70000);
    CHECK(net.used_pairs() == got);
}
