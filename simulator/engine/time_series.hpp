// Delivered bytes, injections and latencies binned over simulated time, so the halves of a
// measurement window can be compared after the run (steady state) whatever the window turns out to
// be. Bins start near a microsecond wide and double whenever the run outgrows kMaxBins of them:
// memory stays bounded however long the run, and a half is still resolved to 1/2048 of it.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/time.hpp"

namespace sansim {

class TimeSeries {
  public:
    struct Totals {
        double bytes = 0;        // delivered in the span
        double latency_sum = 0;  // picoseconds, of the samples injected in the span
        std::uint64_t latency_count = 0;
        std::uint64_t injected = 0;  // samples injected in the span, finished or not
        Time from = 0, to = 0;       // the span the whole bins cover (from == to: none)
    };

    void add_bytes(Time delivered_at, std::uint64_t bytes) {
        bin(delivered_at).bytes += static_cast<double>(bytes);
    }
    void add_injection(Time at) { ++bin(at).injected; }
    void add_latency(Time injected_at, Time latency) {
        Bin &b = bin(injected_at);
        b.latency_sum += static_cast<double>(latency);
        ++b.latency_count;
    }
    // Sums over the bins that lie wholly inside [from, to).
    Totals sum(Time from, Time to) const;
    Time bin_width() const { return Time{1} << shift_; }

  private:
    struct Bin {
        double bytes = 0, latency_sum = 0;
        std::uint64_t latency_count = 0, injected = 0;
    };
    static constexpr std::size_t kMaxBins = 4096;

    Bin &bin(Time t) {
        auto i = static_cast<std::size_t>(t < 0 ? 0 : t >> shift_);
        if (i >= bins_.size()) i = grow(i);
        return bins_[i];
    }
    // Makes room for index i (coarsening as needed); returns i at the new width.
    std::size_t grow(std::size_t i);

    int shift_ = 20;  // bins of 2^20 ps, about a microsecond
    std::vector<Bin> bins_;
};

}  // namespace sansim
