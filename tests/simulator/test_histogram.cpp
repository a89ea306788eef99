// The RTT histogram's percentiles stay within its 1/64 bucket resolution.
#include <catch2/catch.hpp>

#include "engine/histogram.hpp"

using namespace sansim;

TEST_CASE("histogram min, mean, percentiles", "[histogram]") {
    Histogram h;
    for (Time v = 1; v <= 100000; ++v) h.add(v * 1000);
    CHECK(h.count() == 100000);
    CHECK(h.min() == 1000);
    CHECK(h.max() == 100000000);
    CHECK(h.mean() == Approx(50000500.0));
    CHECK(static_cast<double>(h.percentile(0.5)) == Approx(5e7).epsilon(1.0 / 64));
    CHECK(static_cast<double>(h.percentile(0.99)) == Approx(9.9e7).epsilon(1.0 / 64));
    std::uint64_t total = 0;
    for (const auto &b : h.buckets()) total += b.second;
    CHECK(total == 100000);
}
