// The standard experiments' traffic: destination patterns, open-loop sources at an offered
// load, acknowledgements on or off the fabric, self-traffic and the load sweep's saturation.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "app/run.hpp"
#include "traffic/pattern.hpp"

using namespace sansim;

namespace {

WorkloadOptions open_loop(const std::string &pattern, double load) {
    WorkloadOptions w;
    w.kind = "openloop";
    w.pattern = pattern;
    w.load = load;
    return w;
}

Params traffic_theory() {
    Params p;
    p.pci_mbps = 0;  // ideal endpoints
    p.acks = AckPath::none;
    return p;
}

Measurement window(double warmup_us, double measure_us) {
    Measurement m;
    m.warmup_us = warmup_us;
    m.measure_us = measure_us;
    return m;
}

}  // namespace

TEST_CASE("destination patterns send where they say", "[traffic]") {
    std::mt19937_64 rng(7);
    SECTION("uniform and hot spot") {
        DestinationPattern uniform("uniform", 8, false, 0, rng);
        DestinationPattern with_self("uniform", 8, true, 0, rng);
        DestinationPattern hot("hotspot", 8, false, 0.5, rng);
        std::map<int, int> seen, self_seen;
        int to_hot = 0;
        for (int i = 0; i < 8000; ++i) {
            const int d = uniform.next(3, rng);
            REQUIRE(d != 3);
            ++seen[d];
            ++self_seen[with_self.next(3, rng)];
            to_hot += hot.next(5, rng) == 0;
        }
        CHECK(seen.size() == 7);
        CHECK(self_seen.size() == 8);
        CHECK(self_seen[3] > 800);                               // 1/8 of 8000, give or take
        CHECK(to_hot == Approx(4000 + 4000 / 7).epsilon(0.05));  // half, plus its uniform share
    }
    SECTION("permutation, transpose and all-to-all") {
        DestinationPattern perm("permutation", 9, false, 0, rng);
        DestinationPattern tr("transpose", 9, false, 0, rng);
        DestinationPattern all("alltoall", 5, false, 0, rng);
        std::set<int> images;
        for (int s = 0; s < 9; ++s) {
            const int d = perm.next(s, rng);
            CHECK(d != s);  // a derangement
            images.insert(d);
            CHECK(perm.next(s, rng) == d);  // fixed
        }
        CHECK(images.size() == 9);    // a bijection
        CHECK(tr.next(1, rng) == 3);  // (0,1) -> (1,0) on a 3 x 3 grid
        CHECK(tr.next(5, rng) == 7);  // (1,2) -> (2,1)
        CHECK_FALSE(tr.sends(4));     // the diagonal sends nothing without self-traffic
        std::vector<int> order;
        for (int i = 0; i < 8; ++i) order.push_back(all.next(2, rng));
        CHECK(order == std::vector<int>{3, 4, 0, 1, 3, 4, 0, 1});
        CHECK_THROWS_WITH(DestinationPattern("transpose", 8, false, 0, rng),
                          Catch::Contains("square"));
        CHECK_THROWS_WITH(DestinationPattern("tornado", 8, false, 0, rng),
                          Catch::Contains("unknown pattern"));
    }
}

TEST_CASE("open-loop sources inject the offered load and below saturation it is delivered",
          "[traffic]") {
    const Topology mesh = make_topology("mesh:4,4", 1);
    for (const std::string pattern :
         {"uniform", "permutation", "transpose", "hotspot", "alltoall"}) {
        for (const std::string injection : {"bernoulli", "poisson"}) {
            INFO(pattern << " " << injection);
            WorkloadOptions w = open_loop(pattern, 0.2);
            w.injection = injection;
            w.hot_fraction = 0.1;
            const Results r = run_simulation(mesh, Params{}, w, 0, window(200, 4000));
            CHECK(r.complete);  // every transfer of the window delivered
            CHECK_FALSE(r.stalled);
            CHECK(r.duplicates == 0);
            CHECK(r.transfer_latency.count == r.window_transfers);
            CHECK(r.offered_load == 0.2);
            // The random sources' own output, and all of it accepted.
            CHECK(r.injected_fraction == Approx(0.2).epsilon(0.1));
            CHECK(r.throughput_fraction == Approx(r.injected_fraction).epsilon(0.03));
            CHECK(r.senders == (pattern == "transpose" ? 12 : 16));
        }
    }
}

TEST_CASE("acknowledgements on the fabric, on a path of their own, or none", "[traffic]") {
    // Two nodes on one link writing to each other: in-band acknowledgements share the link
    // with the other side's data (96 bytes per 64 of payload: 33.3 MB/s each way); off the
    // link each side gets the data rate, 40 MB/s.
    WorkloadOptions w;
    w.kind = "openloop";
    w.load = 1;  // saturated: a packet every transfer time
    for (const AckPath acks : {AckPath::inband, AckPath::separate, AckPath::none}) {
        INFO(ack_path_name(acks));
        Params p;
        p.pci_mbps = 0;
        p.acks = acks;
        const Results r = run_simulation(make_chain(0), p, w, 0, window(200, 2000));
        const double each_way = acks == AckPath::inband ? 100.0 / 3 : 40.0;
        CHECK(r.mean_tx_mbps == Approx(each_way).epsilon(0.01));
        // Without acknowledgements writes hold no slot and see no round trip.
        CHECK((r.packet_rtt.count == 0) == (acks == AckPath::none));
    }
    // The separate path takes the zero-load time: the same round trip as on an idle fabric.
    Params sep;
    sep.pci_mbps = 0;
    sep.acks = AckPath::separate;
    const Results idle = run_simulation(make_topology("crossbar:4", 1), sep,
                                        open_loop("uniform", 0.01), 0, window(100, 5000));
    CHECK(idle.packet_rtt.min_us == Approx(2 * 1.920 - 64 * 0.020).epsilon(0.001));
}

TEST_CASE("self-traffic turns round at the node's router", "[traffic]") {
    WorkloadOptions w = open_loop("permutation", 0.3);
    w.self = true;
    w.nodes = 1;  // one node, so its only destination is itself
    w.seed = 3;
    const Results r =
        run_simulation(make_topology("crossbar:2", 1), traffic_theory(), w, 0, window(100, 1000));
    CHECK(r.complete);
    CHECK(r.senders == 1);
    CHECK(r.receivers == 1);
    CHECK(r.per_node[0].rx_mbps > 0);
    CHECK(r.mean_hops == Approx(1.0));
    CHECK(r.transfer_latency.min_us == Approx(1.920));  // 80 bytes, two links, one router
}

TEST_CASE("a load sweep finds where accepted throughput stops following", "[traffic]") {
    // Eight nodes on a crossbar, FIFO inputs: head-of-line blocking caps uniform traffic near
    // 62% of the link.
    std::vector<Results> rows;
    WorkloadOptions w = open_loop("uniform", 0);
    w.self = true;
    for (const double load : {0.2, 0.4, 0.55, 0.75, 0.9}) {
        w.load = load;
        rows.push_back(run_simulation(make_topology("crossbar:8", 1), traffic_theory(), w, 0,
                                      window(300, 3000)));
    }
    const Saturation s = find_saturation(rows);
    CHECK(s.reached);
    CHECK(s.last_below == 0.55);
    CHECK(s.first_at == 0.75);
    CHECK(s.max_accepted == Approx(0.62).margin(0.02));
    CHECK(rows[0].steady);
    CHECK_FALSE(rows[4].steady);  // past saturation the queues grow
    CHECK(rows[4].transfer_latency.mean_us > 20 * rows[0].transfer_latency.mean_us);
    const std::string text = load_sweep_text(rows);
    CHECK_THAT(text, Catch::Contains("between offered 0.550 and 0.750"));
}

TEST_CASE("the all-to-all keeps its window posted and sends to every other node once",
          "[traffic]") {
    const Topology topo = make_topology("fattree:3,2", 1);  // 9 nodes
    const int n = topo.nodes;
    for (const std::string order : {"random", "pairwise"})
        for (int window : {1, 3, 0}) {
            INFO(order << " window " << window);
            WorkloadOptions w;
            w.kind = "alltoall";
            w.message_bytes = 256;
            w.alltoall_window = window;
            w.alltoall_order = order;
            Network net(topo, Params{});
            auto work = make_workload(w, net);
            work->start(net);
            const int limit = window == 0 ? n - 1 : window;
            int most = 0;
            for (Time t = from_us(1); !work->finished() && t < from_us(100000); t += from_us(1)) {
                for (int s = 0; s < n; ++s) {
                    REQUIRE(work->messages()->open_messages(s) <= limit);
                    most = std::max(most, work->messages()->open_messages(s));
                }
                net.run(t);
            }
            REQUIRE(work->finished());
            CHECK(most == limit);
            // n(n-1) messages over n(n-1) distinct pairs: each pair once.
            CHECK(work->messages()->messages_done() == static_cast<std::uint64_t>(n * (n - 1)));
            CHECK(net.used_pairs().size() == static_cast<std::size_t>(n * (n - 1)));
        }
}
