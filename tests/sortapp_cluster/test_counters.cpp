// The monitor's store of the nodes' counter samples: answers taken in any order (a liveness
// answer and a counters answer may cover the same samples), gaps where a node's ring dropped
// some, each refusal named with nothing of the answer taken, the clock offset from the
// shortest exchange, and the collation onto one clock and one table of phase names.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "monitor/counters.hpp"

namespace cl = sortapp::cluster;

namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000;  // a plausible realtime, microseconds

viaduct::CounterSample sample(int64_t time_us, uint32_t phase, uint64_t bytes = 0) {
    viaduct::CounterSample s;
    s.time_us = time_us;
    s.phase = phase;
    s.bytes = bytes;
    return s;
}

// An answer holding samples numbered from `first`, of a node that has `end` of them.
cl::CountersAnswer answer(uint64_t first, uint64_t end,
                          const std::vector<viaduct::CounterSample> &samples,
                          std::vector<std::string> names = {"waiting", "phase 1"}) {
    cl::CountersAnswer a;
    a.clock_us = kT0;
    a.phase_names = std::move(names);
    a.first = first;
    a.end = end;
    for (const viaduct::CounterSample &s : samples)
        a.samples.append(reinterpret_cast<const char *>(&s), sizeof s);
    return a;
}

std::vector<viaduct::CounterSample> run(uint64_t from, uint64_t count) {
    std::vector<viaduct::CounterSample> v;
    for (uint64_t k = from; k < from + count; ++k)
        v.push_back(sample(kT0 + static_cast<int64_t>(k) * 100'000, k > 2 ? 1 : 0, k));
    return v;
}

}  // namespace

TEST_CASE("samples taken once each, in order, whatever answers overlap", "[counters]") {
    cl::NodeCounters c;
    REQUIRE(c.take(0, answer(0, 3, run(0, 3)), 0, 0));
    CHECK(c.next == 3);
    CHECK(c.complete());
    // An answer to a question asked before the last one came: samples 1..4, of which 1 and 2
    // are here already.
    REQUIRE(c.take(1, answer(1, 6, run(1, 4)), 0, 0));
    CHECK(c.samples.size() == 5);
    CHECK(c.next == 5);
    CHECK_FALSE(c.complete());  // the node has 6
    for (size_t k = 0; k < c.samples.size(); ++k) CHECK(c.samples[k].bytes == k);
    // The node's ring dropped 5..7: the first it sends is 8.
    REQUIRE(c.take(5, answer(8, 10, run(8, 2)), 0, 0));
    CHECK(c.lost == 3);
    CHECK(c.next == 10);
    CHECK(c.samples.back().bytes == 9);
    // Nothing more, and a ring that has dropped past what was asked.
    REQUIRE(c.take(10, answer(12, 12, {}), 0, 0));
    CHECK(c.lost == 5);
    CHECK(c.next == 12);
    CHECK(c.complete());
}

TEST_CASE("an answer no node could mean is refused whole, naming why", "[counters]") {
    cl::NodeCounters c;
    REQUIRE(c.take(0, answer(0, 2, run(0, 2)), 0, 0));
    const auto refusal = [&](uint64_t asked, const cl::CountersAnswer &a) {
        sortapp::Status s = c.take(asked, a, 0, 0);
        CHECK(c.samples.size() == 2);  // nothing of it taken
        CHECK(c.next == 2);
        return s ? std::string() : s.message();
    };
    CHECK(refusal(2, answer(1, 3, run(1, 2))) == "samples from number 1 when asked from 2");
    CHECK(refusal(2, answer(2, 3, run(2, 1), {"waiting"})) ==
          "a table of phase names that does not extend the one before");
    CHECK(refusal(2, answer(2, 3, run(2, 1), {"phase 1", "waiting"})) ==
          "a table of phase names that does not extend the one before");
    CHECK(refusal(2, answer(2, 3, {sample(kT0, 2)})) ==
          "a sample in phase 2 of a table of 2 phase names");
    CHECK(refusal(2, answer(2, 3, {sample(-5, 0)})) ==
          "a sample taken at -5 us, a time no clock reads");
    cl::CountersAnswer no_clock = answer(2, 2, {});
    no_clock.clock_us = 0;
    CHECK(refusal(2, no_clock) == "a clock reading of 0 us");
    // The table may grow.
    CHECK(c.take(2, answer(2, 3, {sample(kT0, 2)}, {"waiting", "phase 1", "phase 2"}), 0, 0));
    CHECK(c.phase_names.size() == 3);
}

TEST_CASE("the clock offset from the shortest exchange", "[counters]") {
    cl::NodeCounters c;
    // The node's clock is 5 s ahead; a question that took 2 ms, then one that took 200 us.
    cl::CountersAnswer a = answer(0, 0, {});
    a.clock_us = kT0 + 5'000'000 + 1000;
    REQUIRE(c.take(0, a, kT0, kT0 + 2000));
    CHECK(c.clock_known);
    CHECK(c.offset_us == 5'000'000);
    a.clock_us = kT0 + 5'000'000 + 10'100;
    REQUIRE(c.take(0, a, kT0 + 10'000, kT0 + 10'200));
    CHECK(c.offset_us == 5'000'000);
    CHECK(c.round_trip_us == 200);
    // A longer one later does not replace it.
    a.clock_us = kT0 + 5'000'000 + 20'000;
    REQUIRE(c.take(0, a, kT0 + 19'000, kT0 + 29'000));
    CHECK(c.offset_us == 5'000'000);
    CHECK(c.round_trip_us == 200);
}

TEST_CASE("collated: one clock, one table of phase names, each node in time order", "[counters]") {
    std::vector<cl::NodeCounters> nodes(2);
    REQUIRE(nodes[0].take(0, answer(0, 2, {sample(kT0, 0), sample(kT0 + 100, 1)}), 0, 0));
    nodes[0].offset_us = 1000;
    // Node 1 names its phases in another order, and its clock stepped back once.
    REQUIRE(nodes[1].take(0,
                          answer(0, 3, {sample(kT0 + 50, 0), sample(kT0 + 20, 1), sample(kT0, 2)},
                                 {"phase 1", "waiting", "phase 3b"}),
                          0, 0));
    std::vector<cl::NodeCheck> checks(2);
    checks[0].disk = "alpha:sda";
    checks[1].disk = "beta.example:2049";
    const cl::Collated c = cl::collate(nodes, checks);
    CHECK(c.phase_names == std::vector<std::string>{"waiting", "phase 1", "phase 3b"});
    REQUIRE(c.nodes.size() == 2);
    CHECK(c.nodes[0].host == "alpha");
    CHECK(c.nodes[1].host == "beta.example");
    CHECK(c.nodes[0].samples[0].time_us == kT0 - 1000);
    CHECK(c.nodes[0].samples[1].phase == 1);
    const auto &b = c.nodes[1].samples;
    REQUIRE(b.size() == 3);
    CHECK(b[0].time_us == kT0);
    CHECK(b[0].phase == 2);  // phase 3b
    CHECK(b[1].phase == 0);  // waiting
    CHECK(b[2].phase == 1);  // phase 1
}
