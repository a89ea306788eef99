// The expectations model: phase volumes and rates in, seconds out, for the three-phase sort's
// phases and for a river sort's (read+send overlapped, then write once; or runs then merge).
#include <catch2/catch.hpp>

#include "sortapp/expectation.hpp"

using namespace sortapp;

namespace {
constexpr std::uint64_t MB = 1000000;
}

TEST_CASE("expectation: reads and writes that take turns add up", "[expectation]") {
    PhaseVolume v;
    v.read = 100 * MB;
    v.write = 100 * MB;
    Rates r{100, 50, 120, 0};
    CHECK(expected_seconds(v, r) == Approx(1.0 + 2.0));
}

TEST_CASE("expectation: overlapped reads and writes go at the mixed rate", "[expectation]") {
    PhaseVolume v;
    v.read = 60 * MB;
    v.write = 60 * MB;
    v.read_write_overlap = true;
    CHECK(expected_seconds(v, Rates{100, 50, 120, 0}) == Approx(1.0));
    // Without a mixed figure the disk is taken to alternate: no optimism from a missing figure.
    CHECK(expected_seconds(v, Rates{100, 50, 0, 0}) == Approx(0.6 + 1.2));
}

TEST_CASE("expectation: the network overlaps the disk or follows it", "[expectation]") {
    PhaseVolume v;
    v.read = 100 * MB;
    v.send = 300 * MB;
    Rates r{100, 100, 0, 100};
    CHECK(expected_seconds(v, r) == Approx(3.0));  // the slower of 1 s disk and 3 s network
    v.network_overlap = false;
    CHECK(expected_seconds(v, r) == Approx(4.0));
    v.send = 0;
    v.receive = 200 * MB;
    CHECK(expected_seconds(v, r) == Approx(3.0));
}

TEST_CASE("expectation: an unknown rate gives no expectation, not a wrong one", "[expectation]") {
    PhaseVolume v;
    v.read = 10 * MB;
    v.send = 10 * MB;
    CHECK(expected_seconds(v, Rates{100, 100, 0, 0}) == 0);
    CHECK(expected_seconds(v, Rates{0, 100, 0, 100}) == 0);
    CHECK(expected_seconds(PhaseVolume{}, Rates{}) == 0);
    PhaseVolume only_disk;
    only_disk.write = 10 * MB;
    CHECK(expected_seconds(only_disk, Rates{0, 100, 0, 0}) == Approx(0.1));
}

TEST_CASE("expectation: a one-pass river sort and a two-pass sort as phase lists",
          "[expectation]") {
    const Rates r{100, 50, 120, 80};
    // One pass: read and send at once, sort in memory (no transfer), write once.
    PhaseVolume read_send;
    read_send.read = read_send.send = read_send.receive = 400 * MB;
    PhaseVolume write_once;
    write_once.write = 400 * MB;
    CHECK(expected_seconds({read_send, PhaseVolume{}, write_once}, r) == Approx(5.0 + 8.0));
    // Two passes: runs (read, then write), then a merge (both at once).
    PhaseVolume runs;
    runs.read = runs.write = 120 * MB;
    PhaseVolume merge = runs;
    merge.read_write_overlap = true;
    CHECK(expected_seconds({runs, merge}, r) == Approx(1.2 + 2.4 + 2.0));
    // A phase without an expectation leaves the whole without one.
    CHECK(expected_seconds({runs, merge}, Rates{100, 0, 0, 0}) == 0);
}

TEST_CASE("expectation: beating it by more than 25% marks the figure stale", "[expectation]") {
    CHECK(beats_expectation(7.9, 10.0));
    CHECK_FALSE(beats_expectation(8.0, 10.0));
    CHECK_FALSE(beats_expectation(12.0, 10.0));
    CHECK_FALSE(beats_expectation(0.1, 0));  // no expectation, nothing to beat
    CHECK(beats_expectation(0, 10.0));
}
