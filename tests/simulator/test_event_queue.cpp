// The event queue hands events out in (time, scheduling order), whether they fall in the
// bucket being run, on the calendar ring, or beyond it in the far heap.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <tuple>
#include <vector>

#include "engine/event_queue.hpp"

using namespace sansim;

namespace {

struct Scheduled {
    Time time;
    std::uint32_t id;
};

// Pushes and pops in a random interleaving; every pop must be the earliest pending event,
// the earlier scheduled one among equal times.
void check_against_reference(std::uint64_t seed, Time max_delay) {
    std::mt19937_64 rng(seed);
    EventQueue q;
    std::vector<Scheduled> pending;  // kept in scheduling order
    Time now = 0;
    std::uint32_t next_id = 0;
    std::uint64_t popped = 0;
    for (int round = 0; round < 20000; ++round) {
        const int pushes = static_cast<int>(rng() % 4);
        for (int i = 0; i < pushes; ++i) {
            Time t = now + static_cast<Time>(rng() % static_cast<std::uint64_t>(max_delay));
            if (rng() % 8 == 0) t = now;  // same instant as the event being run
            if (rng() % 64 == 0) t = now + 200 * kUs + static_cast<Time>(rng() % kMs);  // far
            q.push(t, next_id % 7, next_id, next_id * 3);
            pending.push_back({t, next_id++});
        }
        if (pending.empty() || rng() % 3 == 0) continue;
        const auto it = std::min_element(pending.begin(), pending.end(),
                                         [](const Scheduled &x, const Scheduled &y) {
                                             return std::tie(x.time, x.id) < std::tie(y.time, y.id);
                                         });
        REQUIRE(q.size() == pending.size());
        REQUIRE(q.top().time == it->time);
        const Event e = q.pop();
        REQUIRE(e.time == it->time);
        REQUIRE(e.a == it->id);
        REQUIRE(e.b == it->id * 3);
        REQUIRE(e.kind() == it->id % 7);
        now = e.time;
        pending.erase(it);
        ++popped;
    }
    while (!pending.empty()) {
        const auto it = std::min_element(pending.begin(), pending.end(),
                                         [](const Scheduled &x, const Scheduled &y) {
                                             return std::tie(x.time, x.id) < std::tie(y.time, y.id);
                                         });
        const Event e = q.pop();
        REQUIRE(e.a == it->id);
        pending.erase(it);
        ++popped;
    }
    CHECK(q.empty());
    CHECK(popped == next_id);
}

}  // namespace

TEST_CASE("events come out in time order, ties in scheduling order", "[event_queue]") {
    SECTION("delays within a bucket") {
        check_against_reference(1, 1000);
    }
    SECTION("delays of a few microseconds, as in the network") {
        check_against_reference(2, 5 * kUs);
    }
    SECTION("delays longer than the calendar ring") {
        check_against_reference(3, 500 * kUs);
    }
}

TEST_CASE("an empty ring jumps to far events; a peek past them leaves room for earlier ones",
          "[event_queue]") {
    EventQueue q;
    q.push(10 * kMs, 0, 1, 0);
    q.push(3 * kMs, 0, 2, 0);
    q.push(3 * kMs, 1, 3, 0);
    CHECK(q.top().time == 3 * kMs);
    // Scheduled after the peek, at an earlier time (as after a run stopped at a time limit).
    q.push(2 * kMs, 2, 4, 0);
    q.push(3 * kMs, 3, 5, 0);
    std::vector<std::uint32_t> order;
    while (!q.empty()) order.push_back(q.pop().a);
    CHECK(order == std::vector<std::uint32_t>{4, 2, 3, 5, 1});
}

TEST_CASE("a million events at one instant keep their scheduling order", "[event_queue]") {
    EventQueue q;
    for (std::uint32_t i = 0; i < 1000000; ++i) q.push(5 * kUs, 0, i, 0);
    for (std::uint32_t i = 0; i < 1000000; ++i) {
        const Event e = q.pop();
        REQUIRE(e.a == i);
        if (i % 1000 == 0) q.push(5 * kUs, 0, 2000000 + i, 0);  // behind all the others
    }
    std::uint32_t expected = 2000000;
    while (!q.empty()) {
        REQUIRE(q.pop().a == expected);
        expected += 1000;
    }
}

TEST_CASE("crowded buckets come out in time order, ties in scheduling order", "[event_queue]") {
    // Thousands of events a bucket (sorted by radix), some at one instant; and far events that
    // join buckets already holding later-scheduled ones as the ring turns (sorted by compare).
    std::mt19937_64 rng(4);
    EventQueue q;
    std::vector<Scheduled> all;
    auto push = [&](Time t) {
        const auto id = static_cast<std::uint32_t>(all.size());
        q.push(t, id % 7, id, 0);
        all.push_back({t, id});
    };
    const Time far = 30 * kUs;  // beyond the 16.8 us ring
    for (int i = 0; i < 2000; ++i) push(far + static_cast<Time>(rng() % 40000));
    for (int i = 0; i < 100000; ++i) {
        const Time t = static_cast<Time>(rng() % 40000);  // 40 ns: about ten buckets
        push(rng() % 16 == 0 ? t / 1000 * 1000 : t);      // some on shared instants
    }
    for (int i = 0; i < 100000; ++i) push(far + static_cast<Time>(rng() % 40000));
    std::vector<Scheduled> want = all;
    std::stable_sort(want.begin(), want.end(),
                     [](const Scheduled &x, const Scheduled &y) { return x.time < y.time; });
    std::size_t mismatch = want.size();
    for (std::size_t i = 0; i < want.size() && mismatch == want.size(); ++i) {
        const Event e = q.pop();
        if (e.a != want[i].id || e.time != want[i].time) mismatch = i;
    }
    CHECK(mismatch == want.size());
    CHECK(q.empty());
}
