// The patterns: uniform random; a random permutation (a derangement without self-traffic);
// transpose (node r*k+c sends to c*k+r on k*k nodes); hot spot (node 0 with probability
// hot_fraction, else uniform); all-to-all (each source cycles through every destination).
#include "traffic/pattern.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sansim {

DestinationPattern::DestinationPattern(const std::string &name, int nodes, bool self,
                                       double hot_fraction, std::mt19937_64 &rng)
    : n_(nodes), self_(self), hot_fraction_(hot_fraction) {
    if (nodes < (self ? 1 : 2))
        throw std::invalid_argument("pattern '" + name + "' needs at least 2 nodes");
    const auto n = static_cast<std::size_t>(nodes);
    if (name == "uniform") {
        kind_ = Kind::uniform;
    } else if (name == "hotspot") {
        kind_ = Kind::hotspot;
    } else if (name == "alltoall") {
        kind_ = Kind::alltoall;
        turn_.assign(n, self ? 0 : 1);
    } else if (name == "permutation") {
        kind_ = Kind::permutation;
        std::vector<int> order(n);
        for (int i = 0; i < nodes; ++i) order[static_cast<std::size_t>(i)] = i;
        std::shuffle(order.begin(), order.end(), rng);
        // With self-traffic any permutation; without, each node of a shuffled order sends to
        // the next, which leaves no node in place.
        fixed_ = order;
        if (!self)
            for (std::size_t i = 0; i < n; ++i)
                fixed_[static_cast<std::size_t>(order[i])] = order[(i + 1) % n];
    } else if (name == "transpose") {
        kind_ = Kind::transpose;
        const int k = static_cast<int>(std::lround(std::sqrt(static_cast<double>(nodes))));
        if (k * k != nodes)
            throw std::invalid_argument("pattern 'transpose' needs a square node count, not " +
                                        std::to_string(nodes));
        fixed_.resize(n);
        for (int r = 0; r < k; ++r)
            for (int c = 0; c < k; ++c) fixed_[static_cast<std::size_t>(r * k + c)] = c * k + r;
    } else {
        throw std::invalid_argument("unknown pattern '" + name +
                                    "' (uniform, permutation, transpose, hotspot, alltoall)");
    }
}

bool DestinationPattern::sends(int s) const {
    return self_ || fixed_.empty() || fixed_[static_cast<std::size_t>(s)] != s;
}

int DestinationPattern::uniform(int s, std::mt19937_64 &rng) const {
    std::uniform_int_distribution<int> pick(0, self_ ? n_ - 1 : n_ - 2);
    const int d = pick(rng);
    return !self_ && d >= s ? d + 1 : d;
}

int DestinationPattern::next(int s, std::mt19937_64 &rng) {
    switch (kind_) {
        case Kind::uniform: return uniform(s, rng);
        case Kind::permutation:
        case Kind::transpose: return fixed_[static_cast<std::size_t>(s)];
        case Kind::hotspot: {
            std::uniform_real_distribution<double> u(0.0, 1.0);
            if ((s != 0 || self_) && u(rng) < hot_fraction_) return 0;
            return uniform(s, rng);
        }
        case Kind::alltoall: {
            int &k = turn_[static_cast<std::size_t>(s)];
            const int d = (s + k) % n_;
            if (++k == n_) k = self_ ? 0 : 1;
            return d;
        }
    }
    return 0;
}

void DestinationPattern::each_pair(const std::function<void(int, int)> &visit) const {
    for (int s = 0; s < n_; ++s) {
        if (!sends(s)) continue;
        if (!fixed_.empty()) {
            visit(s, fixed_[static_cast<std::size_t>(s)]);
            continue;
        }
        for (int d = 0; d < n_; ++d)
            if (d != s || self_) visit(s, d);
    }
}

}  // namespace sansim
