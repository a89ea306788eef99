// The needle finder on hand-built phases of 4 and 16 nodes: each injected disturbance is named
// with its node, phase, cause and figure; clean runs, two-node phases and short phases name
// nothing; and summarize() reduces cumulative samples to the phase's means.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sortapp/needle.hpp"

using namespace sortapp;

namespace {

constexpr double straggler = 0.25;

// A deterministic spread in [-1, 1] for node `i`, different for each `salt`.
double spread(int i, int salt) {
    return static_cast<double>((i * 37 + salt * 11) % 21 - 10) / 10;
}

// A node doing its share normally: figures within a few percent of the other nodes'.
PhaseCounters typical(int node, const std::string &phase, double seconds) {
    PhaseCounters c;
    c.node = node;
    c.phase = phase;
    c.seconds = seconds * (1 + 0.05 * spread(node, 1));
    c.bytes = static_cast<uint64_t>(1e9 * (1 + 0.03 * spread(node, 2)));
    c.other_cpu = 0.03 + 0.02 * spread(node, 3);
    c.proc_cpu = 1.2 + 0.1 * spread(node, 4);
    c.disk_busy = 0.95;
    c.disk_mb_s = (400 + 15 * spread(node, 5)) * c.disk_busy;
    c.disk_expected_mb_s = 420;
    c.major_faults = static_cast<uint64_t>(6 + 6 * spread(node, 6));
    c.net_mb_s = 110 + 5 * spread(node, 7);
    return c;
}

std::vector<PhaseCounters> clean_phase(int nodes, const std::string &phase, double seconds) {
    std::vector<PhaseCounters> v;
    for (int i = 0; i < nodes; ++i) v.push_back(typical(i, phase, seconds));
    return v;
}

// The one needle the finder names, with its node, phase and cause checked.
Needle only_needle(const std::vector<PhaseCounters> &phases, int node, const std::string &phase,
                   const std::string &cause) {
    const std::vector<Needle> found = find_needles(phases, straggler);
    REQUIRE(found.size() == 1);
    const Needle &n = found[0];
    INFO(n.text);
    CHECK(n.node == node);
    CHECK(n.phase == phase);
    CHECK(n.cause == cause);
    CHECK(n.ratio > 1 + straggler);
    CHECK(n.text.rfind("needle: node " + std::to_string(node) + ", " + phase + ", ", 0) == 0);
    CHECK(n.figures["node"]["seconds"].get<double>() == Approx(phases[node].seconds));
    return n;
}

bool has(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("needle: each injected cause is named with its node, phase and figure", "[needle]") {
    const int nodes = GENERATE(4, 16);
    const int slow = nodes == 4 ? 2 : 11;
    const std::string phase = "phase 3b";
    std::vector<PhaseCounters> v = clean_phase(nodes, phase, 10);
    PhaseCounters &c = v[slow];
    INFO(nodes << " nodes");

    SECTION("another process on its CPU") {
        c.seconds = 15;
        c.other_cpu = 0.46;
        const Needle n = only_needle(v, slow, phase, "cpu");
        CHECK(has(n.text, "took 46% of its CPU"));
    }
    SECTION("a disk short of its probe") {
        c.seconds = 16;
        c.disk_busy = 0.98;
        c.disk_mb_s = 212 * 0.98;
        const Needle n = only_needle(v, slow, phase, "disk");
        CHECK(has(n.text, "212 MB/s while busy against 420 from its probe"));
    }
    SECTION("a disk slower than the others', without probe figures or busy times") {
        for (PhaseCounters &p : v) p.disk_expected_mb_s = 0, p.disk_busy = 0;
        c.seconds = 16;
        c.disk_mb_s = 250;
        const Needle n = only_needle(v, slow, phase, "disk");
        CHECK(has(n.text, "its disk delivered 250 MB/s against"));
    }
    SECTION("paging") {
        c.seconds = 14;
        c.major_faults = 5000;
        const Needle n = only_needle(v, slow, phase, "paging");
        CHECK(has(n.text, "it paged: 5000 major faults"));
    }
    SECTION("a slower network") {
        c.seconds = 15;
        c.net_mb_s = 40;
        const Needle n = only_needle(v, slow, phase, "network");
        CHECK(has(n.text, "its network moved 40 MB/s against"));
    }
    SECTION("a larger partition") {
        for (PhaseCounters &p : v) p.bytes = 1000000000;
        c.bytes = 1400000000;
        c.seconds = 14;
        const Needle n = only_needle(v, slow, phase, "partition");
        CHECK(has(n.text, "its partition was 1.40x the others' (1.40 GB against 1.00 GB)"));
    }
    SECTION("no counter evidence") {
        c.seconds = 15;
        const Needle n = only_needle(v, slow, phase, "unknown");
        CHECK(has(n.text, "no counter explains it"));
        CHECK(n.figures["evidence"].empty());
        CHECK(n.figures["others"]["net_mb_s"].get<double>() > 100);
    }
}

TEST_CASE("needle: a clean run names nothing", "[needle]") {
    const int nodes = GENERATE(4, 16);
    std::vector<PhaseCounters> v = clean_phase(nodes, "phase 1", 8);
    for (const PhaseCounters &p : clean_phase(nodes, "phase 2", 12)) v.push_back(p);
    CHECK(find_needles(v, straggler).empty());
    // Slower, but within the threshold: its high CPU figure does not make it a needle.
    v[1].seconds = 8 * 1.2;
    v[1].other_cpu = 0.5;
    CHECK(find_needles(v, straggler).empty());
    // Clearly past it.
    v[1].seconds = 8 * 1.35;
    CHECK(find_needles(v, straggler).size() == 1);
}

TEST_CASE("needle: the strongest cause names the needle, a second clearly off is mentioned",
          "[needle]") {
    std::vector<PhaseCounters> v = clean_phase(4, "phase 3b", 10);
    v[2].seconds = 14.1;
    v[2].other_cpu = 0.46;
    v[2].disk_busy = 1;
    v[2].disk_mb_s = 212;
    const std::vector<Needle> found = find_needles(v, straggler);
    REQUIRE(found.size() == 1);
    CHECK(found[0].cause == "cpu");
    CHECK(found[0].text.rfind("needle: node 2, phase 3b, ", 0) == 0);
    CHECK(has(found[0].text, "x the median: other processes took 46% of its CPU"));
    CHECK(has(found[0].text, "; its disk delivered 212 MB/s while busy"));
    REQUIRE(found[0].figures["evidence"].size() == 2);
    CHECK(found[0].figures["evidence"][1]["cause"] == "disk");
}

TEST_CASE("needle: rates that any slowdown lowers do not outweigh the cause", "[needle]") {
    // A node whose CPU went to another process moves its bytes over a longer time: its network
    // and disk rates over the phase fall with its speed, but its disk's rate while busy does not.
    std::vector<PhaseCounters> v = clean_phase(16, "river sort", 10);
    PhaseCounters &c = v[5];
    c.seconds = 20;
    c.other_cpu = 0.3;
    c.net_mb_s /= 2;
    c.disk_busy /= 2;
    c.disk_mb_s /= 2;
    const std::vector<Needle> found = find_needles(v, straggler);
    REQUIRE(found.size() == 1);
    INFO(found[0].text);
    CHECK(found[0].cause == "cpu");
    CHECK_FALSE(has(found[0].text, "network"));
    CHECK_FALSE(has(found[0].text, "disk"));
}

TEST_CASE("needle: slow nodes in different phases are each named", "[needle]") {
    const int nodes = GENERATE(4, 16);
    std::vector<PhaseCounters> v = clean_phase(nodes, "phase 1", 6);
    for (const PhaseCounters &p : clean_phase(nodes, "phase 3b", 9)) v.push_back(p);
    v[1].seconds = 9;
    v[1].other_cpu = 0.6;
    PhaseCounters &late = v[static_cast<std::size_t>(nodes) + 3];
    late.seconds = 14;
    late.major_faults = 900;
    const std::vector<Needle> found = find_needles(v, straggler);
    REQUIRE(found.size() == 2);
    CHECK(found[0].node == 1);
    CHECK(found[0].phase == "phase 1");
    CHECK(found[0].cause == "cpu");
    CHECK(found[1].node == 3);
    CHECK(found[1].phase == "phase 3b");
    CHECK(found[1].cause == "paging");
    CHECK(has(found[1].text, "900 major faults"));
}

TEST_CASE("needle: a phase of two nodes names nothing", "[needle]") {
    std::vector<PhaseCounters> v = clean_phase(2, "phase 2", 10);
    v[1].seconds = 30;
    v[1].other_cpu = 0.7;
    CHECK(find_needles(v, straggler).empty());
}

TEST_CASE("needle: phases too short to judge name nothing", "[needle]") {
    // Under half a second: a handful of samples.
    std::vector<PhaseCounters> v = clean_phase(4, "phase 1", 0.4);
    v[0].seconds = 1.2;
    v[0].other_cpu = 0.7;
    CHECK(find_needles(v, straggler).empty());
    // 0.6 s: long enough for the samples, but a 25% excess is within the timing noise; a
    // coarser straggler threshold makes the excess large enough to judge.
    v = clean_phase(4, "phase 1", 0.6);
    v[0].seconds = 1.2;
    v[0].other_cpu = 0.7;
    CHECK(find_needles(v, straggler).empty());
    CHECK(find_needles(v, 0.5).size() == 1);
    CHECK(find_needles(v, 0).empty());
}

namespace {

// Cumulative samples ten a second for `seconds`, of a 2-CPU host where this process uses
// half a CPU (0.4 user, 0.1 system) and other processes a further 0.6 CPU; the device reads
// 100 MB/s and writes 50 MB/s, busy 80% of the time; the network sends 30 MB/s and receives
// 20; and the process takes `faults_per_sample` major faults every sample.
std::vector<viaduct::CounterSample> steady_samples(double seconds, uint64_t faults_per_sample) {
    viaduct::CounterSample s;
    s.time_us = 1700000000000000;
    s.cpus = 2;
    s.proc_user_us = 5000000, s.proc_sys_us = 1000000;
    s.host_user_us = 90000000, s.host_sys_us = 20000000, s.host_idle_us = 400000000;
    s.dev_read_bytes = 7000000000, s.dev_write_bytes = 3000000000, s.dev_busy_us = 50000000;
    s.net_sent_bytes = 100000, s.net_received_bytes = 200000;
    s.major_faults = 42;
    std::vector<viaduct::CounterSample> v{s};
    for (int i = 0; i < static_cast<int>(seconds * 10 + 0.5); ++i) {
        s.time_us += 100000;
        s.proc_user_us += 40000, s.proc_sys_us += 10000;
        s.host_user_us += 80000, s.host_sys_us += 30000;  // busy: 50 ms ours, 60 ms others'
        s.host_iowait_us += 10000, s.host_idle_us += 80000;
        s.dev_read_bytes += 10000000, s.dev_write_bytes += 5000000, s.dev_busy_us += 80000;
        s.net_sent_bytes += 3000000, s.net_received_bytes += 2000000;
        s.major_faults += faults_per_sample;
        v.push_back(s);
    }
    return v;
}

}  // namespace

TEST_CASE("needle: summarize reduces cumulative samples to the phase's means", "[needle]") {
    const PhaseCounters c = summarize(3, "phase 3b", steady_samples(2, 7), 123456, 420);
    CHECK(c.node == 3);
    CHECK(c.phase == "phase 3b");
    CHECK(c.bytes == 123456);
    CHECK(c.disk_expected_mb_s == 420);
    CHECK(c.seconds == Approx(2.0));
    CHECK(c.proc_cpu == Approx(0.5));
    CHECK(c.other_cpu == Approx(0.3));
    CHECK(c.disk_mb_s == Approx(150));
    CHECK(c.disk_busy == Approx(0.8));
    CHECK(c.net_mb_s == Approx(50));
    CHECK(c.major_faults == 140);

    const PhaseCounters one = summarize(1, "phase 1", steady_samples(0, 7), 99, 0);
    CHECK(one.seconds == 0);
    CHECK(one.bytes == 99);
    CHECK(one.major_faults == 0);
    CHECK(summarize(1, "phase 1", {}, 0, 0).seconds == 0);
}

TEST_CASE("needle: summarized samples of a paging node name it", "[needle]") {
    std::vector<PhaseCounters> v;
    for (int node = 0; node < 4; ++node) {
        const bool slow = node == 1;
        v.push_back(summarize(node, "phase 2", steady_samples(slow ? 4 : 3, slow ? 50 : 0),
                              1000000000, 200));
    }
    const std::vector<Needle> found = find_needles(v, straggler);
    REQUIRE(found.size() == 1);
    CHECK(found[0].node == 1);
    CHECK(found[0].cause == "paging");
    CHECK(found[0].ratio == Approx(4.0 / 3));
    CHECK(has(found[0].text, "it paged: 2000 major faults against 0 on the others"));
}
