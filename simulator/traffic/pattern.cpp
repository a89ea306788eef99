// The patterns: uniform random; a random permutation (a derangement without self-traffic);
// transpose (node r*k+c sends to c*k+r on k*k nodes); hot spot (node 0 with probability
// hot_fraction, else uniform); all-to-all (each source cycles through every destination);
// next group (uniform over the nodes of the group after the source's: on a dragonfly, every
// packet of a group needs the one global link to the next group under minimal routing);
// remote (uniform over the nodes wired to other routers than the source's: on a fat tree,
// traffic that leaves the leaf router and crosses the levels above).
#include "traffic/pattern.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sansim {

DestinationPattern::DestinationPattern(const std::string &name, int nodes, bool self,
                                       double hot_fraction, std::mt19937_64 &rng,
                                       const std::vector<int> &groups,
                                       const std::vector<int> &routers)
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
    } else if (name == "next_group") {
        kind_ = Kind::next_group;
        group_members(groups);
    } else if (name == "remote") {
        kind_ = Kind::remote;
        remote_nodes(routers);
    } else {
        throw std::invalid_argument(
            "unknown pattern '" + name +
            "' (uniform, permutation, transpose, hotspot, alltoall, next_group, remote)");
    }
}

// Per source, the nodes on other routers: kept per router (target_group_ names the source's
// list), as sources on one router share it.
void DestinationPattern::remote_nodes(const std::vector<int> &routers) {
    if (routers.size() < static_cast<std::size_t>(n_))
        throw std::invalid_argument("pattern 'remote' needs each node's router");
    std::vector<int> index;  // router -> list
    target_group_.resize(static_cast<std::size_t>(n_));
    for (int s = 0; s < n_; ++s) {
        const int r = routers[static_cast<std::size_t>(s)];
        if (r < 0)
            throw std::invalid_argument("pattern 'remote': node n" + std::to_string(s) +
                                        " is not wired to a router");
        if (static_cast<std::size_t>(r) >= index.size())
            index.resize(static_cast<std::size_t>(r) + 1, -1);
        int &list = index[static_cast<std::size_t>(r)];
        if (list < 0) {
            list = static_cast<int>(members_.size());
            members_.emplace_back();
            for (int d = 0; d < n_; ++d)
                if (routers[static_cast<std::size_t>(d)] != r) members_.back().push_back(d);
            if (members_.back().empty())
                throw std::invalid_argument("pattern 'remote' needs nodes on two routers");
        }
        target_group_[static_cast<std::size_t>(s)] = list;
    }
}

// Groups in increasing order of their numbers among the nodes used; the last one's next is
// the first.
void DestinationPattern::group_members(const std::vector<int> &groups) {
    std::vector<int> ids;
    for (int s = 0; s < n_; ++s) {
        const int g =
            static_cast<std::size_t>(s) < groups.size() ? groups[static_cast<std::size_t>(s)] : -1;
        if (g < 0)
            throw std::invalid_argument(
                "pattern 'next_group' needs groups (a dragonfly, or "
                "routers with 'group G'), and node n" +
                std::to_string(s) + " has none");
        ids.push_back(g);
    }
    std::vector<int> order = ids;
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
    if (order.size() < 2) throw std::invalid_argument("pattern 'next_group' needs two groups");
    members_.resize(order.size());
    target_group_.resize(static_cast<std::size_t>(n_));
    for (int s = 0; s < n_; ++s) {
        const auto rank = static_cast<std::size_t>(
            std::lower_bound(order.begin(), order.end(), ids[static_cast<std::size_t>(s)]) -
            order.begin());
        members_[rank].push_back(s);
        target_group_[static_cast<std::size_t>(s)] = static_cast<int>((rank + 1) % order.size());
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
        case Kind::uniform:
            return uniform(s, rng);
        case Kind::permutation:
        case Kind::transpose:
            return fixed_[static_cast<std::size_t>(s)];
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
        case Kind::remote:
        case Kind::next_group: {
            const auto &to =
                members_[static_cast<std::size_t>(target_group_[static_cast<std::size_t>(s)])];
            std::uniform_int_distribution<std::size_t> pick(0, to.size() - 1);
            return to[pick(rng)];
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
        if (kind_ == Kind::next_group || kind_ == Kind::remote) {
            for (int d :
                 members_[static_cast<std::size_t>(target_group_[static_cast<std::size_t>(s)])])
                visit(s, d);
            continue;
        }
        for (int d = 0; d < n_; ++d)
            if (d != s || self_) visit(s, d);
    }
}

}  // namespace sansim
