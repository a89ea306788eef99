// Coarsening and window sums of the time series.
#include "engine/time_series.hpp"

namespace sansim {

std::size_t TimeSeries::grow(std::size_t i) {
    while (i >= kMaxBins) {
        // Merge neighbours: bin k at the new width holds old bins 2k and 2k+1.
        for (std::size_t k = 0; 2 * k < bins_.size(); ++k) {
            Bin merged = bins_[2 * k];
            if (2 * k + 1 < bins_.size()) {
                const Bin &b = bins_[2 * k + 1];
                merged.bytes += b.bytes;
                merged.latency_sum += b.latency_sum;
                merged.latency_count += b.latency_count;
                merged.injected += b.injected;
            }
            bins_[k] = merged;
        }
        bins_.resize((bins_.size() + 1) / 2);
        ++shift_;
        i >>= 1;
    }
    if (i >= bins_.size()) bins_.resize(i + 1);
    return i;
}

TimeSeries::Totals TimeSeries::sum(Time from, Time to) const {
    Totals t;
    const Time w = bin_width();
    if (from < 0) from = 0;
    const Time first = (from + w - 1) / w;  // first whole bin
    const Time last = to / w;               // one past the last whole bin
    if (last <= first) return t;
    t.from = first * w;
    t.to = last * w;
    for (Time k = first; k < last && static_cast<std::size_t>(k) < bins_.size(); ++k) {
        const Bin &b = bins_[static_cast<std::size_t>(k)];
        t.bytes += b.bytes;
        t.latency_sum += b.latency_sum;
        t.latency_count += b.latency_count;
        t.injected += b.injected;
    }
    return t;
}

}  // namespace sansim
