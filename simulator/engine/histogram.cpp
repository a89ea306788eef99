// Log-linear bucketing: 64 linear sub-buckets per power of two.
#include "engine/histogram.hpp"

#include <bit>

namespace sansim {

std::size_t Histogram::index_of(Time v) {
    if (v < kSub) return static_cast<std::size_t>(v < 0 ? 0 : v);
    const auto u = static_cast<std::uint64_t>(v);
    const int msb = 63 - std::countl_zero(u);
    const int shift = msb - 6;  // keep 6 significant bits below the leading one
    const auto sub = static_cast<std::size_t>((u >> shift) & (kSub - 1));
    return static_cast<std::size_t>(kSub) * static_cast<std::size_t>(shift + 1) + sub;
}

Time Histogram::lower_of(std::size_t i) {
    if (i < static_cast<std::size_t>(kSub)) return static_cast<Time>(i);
    const std::size_t shift = i / kSub - 1;
    const std::size_t sub = i % kSub;
    return static_cast<Time>((static_cast<std::uint64_t>(kSub) + sub) << shift);
}

void Histogram::add(Time v) {
    const std::size_t i = index_of(v);
    if (i >= bins_.size()) bins_.resize(i + 1, 0);
    ++bins_[i];
    if (count_ == 0 || v < min_) min_ = v;
    if (count_ == 0 || v > max_) max_ = v;
    ++count_;
    sum_ += static_cast<double>(v);
}

Time Histogram::percentile(double q) const {
    if (count_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bins_.size(); ++i) {
        seen += bins_[i];
        if (seen > rank) {
            Time v = lower_of(i);
            if (v < min_) v = min_;
            if (v > max_) v = max_;
            return v;
        }
    }
    return max_;
}

std::vector<Histogram::Bucket> Histogram::buckets() const {
    std::vector<Bucket> out;
    for (std::size_t i = 0; i < bins_.size(); ++i)
        if (bins_[i] != 0) out.push_back({lower_of(i), lower_of(i + 1) - lower_of(i), bins_[i]});
    return out;
}

}  // namespace sansim
