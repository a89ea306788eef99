// Honest runs: a network that stops delivering is reported as stalled (or deadlocked) and
// incomplete; statistics come from the measurement window alone; steady state is checked;
// per-node figures cover the nodes that took part.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "app/run.hpp"

using namespace sansim;

namespace {

const std::string kRing4 = std::string(SANSIM_TEST_DIR) + "/ring4.topo";

// phase3b at 20,000 requests/s on four routers in a ring, two nodes each.
Results ring4_phase3b(const std::string &routing) {
    Topology topo = make_topology(kRing4, 1);
    topo.routing = routing;
    WorkloadOptions w;
    w.kind = "phase3b";
    w.requests_per_s = 20000;
    Params p;
    p.disk_mbps = 8;
    return run_simulation(topo, p, w, 80 * kMs);
}

WorkloadOptions light_phase3b(double rate) {
    WorkloadOptions w;
    w.kind = "phase3b";
    w.requests_per_s = rate;
    w.read_fraction = 0;
    return w;
}

std::string write_trace(const std::string &name, const std::string &text) {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("sansim_test_" + name + ".trace")).string();
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST_CASE("a network that stops delivering is stalled, deadlocked and incomplete",
          "[measurement]") {
    const Results r = ring4_phase3b("shortest");
    CHECK(r.stalled);
    CHECK(r.deadlock);  // packets hold FIFOs around the ring with every link idle
    CHECK_FALSE(r.complete);
    CHECK(r.transfers_pending > 0);
    // Detected one stall time after the last delivery, long before the 80 ms limit.
    CHECK(r.sim_time_us < 30000);
    CHECK(r.stall_us == Approx(1000));
    // The same load under up*/down* routing keeps moving to the time limit.
    const Results ok = ring4_phase3b("updown");
    CHECK_FALSE(ok.stalled);
    CHECK_FALSE(ok.deadlock);
    CHECK(ok.sim_time_us == Approx(80000));
    CHECK(ok.payload_delivered > 4 * r.payload_delivered);
    // Open loop without a window never finishes: not complete, though nothing went wrong.
    CHECK_FALSE(ok.complete);
}

TEST_CASE("statistics come from the measurement window only", "[measurement]") {
    const Topology topo = make_topology("crossbar:8", 1);
    const WorkloadOptions w = light_phase3b(2000);  // 8 MB/s per node: light
    Measurement m;
    m.warmup_us = 500;
    m.measure_us = 2000;
    // Whatever happens after the window cannot change what was measured in it.
    const Results a = run_simulation(topo, Params{}, w, from_us(2500), m);
    const Results b = run_simulation(topo, Params{}, w, from_us(9000), m);
    CHECK(a.window_given);
    CHECK(a.span_begin_us == Approx(500));
    CHECK(a.span_end_us == Approx(2500));
    CHECK(a.aggregate_mbps == b.aggregate_mbps);
    CHECK(a.window_transfers == b.window_transfers);
    // Latencies count the window's transfers only: all of them once drained.
    const Results drained = run_simulation(topo, Params{}, w, 0, m);
    CHECK(drained.complete);
    CHECK(drained.window_undrained == 0);
    CHECK(drained.transfer_latency.count == drained.window_transfers);
    CHECK(drained.window_transfers == a.window_transfers);
    CHECK(drained.sim_time_us > 2500);
    CHECK(drained.sim_time_us < 2500 + 2000);  // stopped once drained, not at the drain limit
    // Without the window the same run counts every transfer.
    const Results whole = run_simulation(topo, Params{}, w, from_us(2500));
    CHECK(whole.transfer_latency.count > drained.transfer_latency.count);
}

TEST_CASE("steady state is told from queues that keep growing", "[measurement]") {
    const Topology topo = make_topology("crossbar:8", 1);
    Measurement m;
    m.warmup_us = 1000;
    m.measure_us = 4000;
    // 4 KiB at 2,000/s is 8 MB/s per node: well within a node's 33 MB/s.
    const Results light = run_simulation(topo, Params{}, light_phase3b(2000), 0, m);
    CHECK(light.steady_known);
    CHECK(light.steady);
    CHECK(std::abs(light.throughput_drift) < 0.1);
    // 4 KiB at 20,000/s is 82 MB/s per node, over twice what the PCI bus passes: queues
    // grow through the window and so does latency.
    const Results heavy = run_simulation(topo, Params{}, light_phase3b(20000), 0, m);
    CHECK(heavy.steady_known);
    CHECK_FALSE(heavy.steady);
    CHECK(heavy.unfinished > 0.5);  // the second half's transfers still queue at the end
    // Given the time to finish them, they show the latency growing.
    m.drain_us = 100000;
    const Results drained = run_simulation(topo, Params{}, light_phase3b(20000), 0, m);
    CHECK(drained.complete);
    CHECK_FALSE(drained.steady);
    CHECK(drained.unfinished == 0);
    CHECK(drained.latency_drift > 0.5);
}

TEST_CASE("per-node figures cover the nodes that took part", "[measurement]") {
    Params ideal;
    ideal.pci_mbps = 0;
    WorkloadOptions w;
    w.kind = "trace";
    w.trace_path = write_trace("stream", "0 0 1 262144 write\n");
    // One 40 MB/s stream between two of four nodes.
    const Results r = run_simulation(make_topology("crossbar:4", 1), ideal, w, 0);
    CHECK(r.complete);
    CHECK(r.active_nodes == 2);
    CHECK(r.senders == 1);
    CHECK(r.receivers == 1);
    CHECK(r.mean_tx_mbps == Approx(40.0).epsilon(0.003));
    CHECK(r.mean_rx_mbps == Approx(40.0).epsilon(0.003));
    CHECK(r.throughput_fraction == Approx(1.0).epsilon(0.003));
    CHECK(r.capacity_mbps == Approx(40.0));
    CHECK_FALSE(r.per_node[2].active);
    CHECK(r.mean_hops == Approx(1.0));  // the one pair that carried traffic
    // A completed all-to-all on the asymmetric dual fabric: nodes finish at different times.
    WorkloadOptions all;
    all.message_bytes = 16384;
    const Results a = run_simulation(make_topology("dual:16", 2), Params{}, all, 0);
    CHECK(a.complete);
    CHECK(a.active_nodes == 16);
    CHECK(a.min_bidir_mbps < a.max_bidir_mbps);
    CHECK(a.min_bidir_mbps <= a.p50_bidir_mbps);
    CHECK(a.p50_bidir_mbps <= a.p99_bidir_mbps);
}
