// Log-linear histogram of durations: exact min/max/mean, percentiles within 1/64 relative
// error, constant memory however many samples (a 10 ms run on 1,024 nodes has millions).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/time.hpp"

namespace sansim {

class Histogram {
  public:
    void add(Time v);
    std::uint64_t count() const { return count_; }
    Time min() const { return count_ ? min_ : 0; }
    Time max() const { return count_ ? max_ : 0; }
    double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
    // Value below which `q` (0..1) of the samples fall.
    Time percentile(double q) const;
    // A bucket holds the samples in [lower, lower + width). Widths double at every power of two
    // (64 linear sub-buckets each), so counts per bucket are not comparable across powers of two;
    // count / width (a density) is.
    struct Bucket {
        Time lower = 0, width = 0;
        std::uint64_t count = 0;
    };
    // Every non-empty bucket, in increasing order.
    std::vector<Bucket> buckets() const;

  private:
    static constexpr int kSub = 64;
    static std::size_t index_of(Time v);
    static Time lower_of(std::size_t i);

    std::vector<std::uint64_t> bins_;
    std::uint64_t count_ = 0;
    double sum_ = 0;  // picoseconds; a double keeps 53 bits, ample for a mean
    Time min_ = 0, max_ = 0;
};

}  // namespace sansim
