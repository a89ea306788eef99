// The RTT histogram's percentiles stay within its 1/64 bucket resolution.
#include <bit>
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
    for (const auto &b : h.buckets()) total += b.count;
    CHECK(total == 100000);
}

// Buckets tile the axis: each ends where the next begins, and widths double at each power of
// two (the plots divide counts by them).
TEST_CASE("histogram bucket widths", "[histogram]") {
    Histogram h;
    for (Time v = 0; v < 4096; ++v) h.add(v);
    const auto b = h.buckets();
    REQUIRE(b.size() > 100);
    for (std::size_t i = 0; i + 1 < b.size(); ++i) CHECK(b[i].lower + b[i].width == b[i + 1].lower);
    for (const auto &x : b) {
        const auto lower = static_cast<std::uint64_t>(x.lower);
        CHECK(static_cast<std::uint64_t>(x.width) == (lower < 64 ? 1 : std::bit_floor(lower) / 64));
        CHECK(x.count == static_cast<std::uint64_t>(x.width));
    }
}
