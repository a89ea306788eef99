// FifoRing, the transports' queue of posted receives and completions made in the call: first in,
// first out across the ring's end and across every growth, whatever the mix of pushes and pops.
#include <catch2/catch.hpp>
#include <deque>
#include <random>

#include "transport/transport.hpp"

TEST_CASE("a FifoRing gives back what was pushed, in order, across wraps and growth",
          "[fifo_ring]") {
    msg::FifoRing<int> ring;
    std::deque<int> model;
    CHECK(ring.empty());
    std::mt19937 rng(7);
    int next = 0;
    // Bursts of pushes (up to 40, past the first capacity of 16 while the head has moved)
    // against bursts of pops, checked against a deque.
    for (int round = 0; round < 2000; ++round) {
        const int pushes = static_cast<int>(rng() % 41);
        for (int i = 0; i < pushes; ++i) {
            ring.push(next);
            model.push_back(next++);
        }
        const int pops = static_cast<int>(rng() % 41);
        for (int i = 0; i < pops && !model.empty(); ++i) {
            REQUIRE(ring.front() == model.front());
            REQUIRE(ring.pop() == model.front());
            model.pop_front();
        }
        REQUIRE(ring.size() == model.size());
        REQUIRE(ring.empty() == model.empty());
    }
    ring.clear();
    CHECK(ring.empty());
    ring.push(5);
    CHECK(ring.pop() == 5);
}
