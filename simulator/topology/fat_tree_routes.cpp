// Up*/down* on the fat tree generator's k-ary n-tree, from digits: router <w,l> has below it
// the leaves that agree with w in digits 0..l-1; toward such a destination it goes down the
// port of the destination leaf's digit l (the node's port at the leaf), toward any other up
// one of its up ports, chosen as the tables choose among equal next hops.
#include <vector>

#include "topology/route_rules.hpp"

namespace sansim {
namespace {

class FatTreeRule : public RouteRule {
  public:
    FatTreeRule(const Topology &t) {
        k_ = t.generator_args[0];
        n_ = t.generator_args[1];
        ups_ = k_ / t.generator_args[2];
        lowest_ = t.ties == "dmodk" ? n_ - 1 : -1;
        pow_.assign(static_cast<std::size_t>(n_) + 1, 1);
        for (int i = 1; i <= n_; ++i)
            pow_[static_cast<std::size_t>(i)] = pow_[static_cast<std::size_t>(i) - 1] * k_;
        // The generator's order: per fabric, level by level, the routers kept.
        const int per_level = pow_[static_cast<std::size_t>(n_) - 1];
        for (int f = 0; f < t.fabrics; ++f)
            for (int l = 0; l < n_; ++l)
                for (int w = 0; w < per_level; ++w) {
                    if (l != n_ - 1 && digit(w, n_ - 2) >= ups_) continue;
                    level_.push_back(static_cast<std::int8_t>(l));
                    label_.push_back(w);
                }
    }

    std::uint16_t port(int u, int phase, int d) const override {
        const int l = level_[static_cast<std::size_t>(u)];
        const int w = label_[static_cast<std::size_t>(u)];
        const int leaf = d / k_;
        const int below = pow_[static_cast<std::size_t>(l)];
        if (w % below == leaf % below)
            return static_cast<std::uint16_t>(l == n_ - 1 ? d % k_ : digit(leaf, l));
        if (phase == 1) return Routing::kNone;  // down links taken: no way up again
        const int choices = l == n_ - 1 ? ups_ : k_;
        if (choices == 1) return static_cast<std::uint16_t>(k_);
        return static_cast<std::uint16_t>(
            k_ + static_cast<int>(tie_break(lowest_ < 0 ? -1 : l, u, d,
                                            static_cast<std::size_t>(choices), lowest_)));
    }

    // Up to the lowest level whose routers have both leaves below, and down again.
    std::uint8_t hops(int, int s, int d) const override {
        const int a = s / k_, b = d / k_;
        int common = n_ - 1;
        while (common > 0 && a % pow_[static_cast<std::size_t>(common)] !=
                                 b % pow_[static_cast<std::size_t>(common)])
            --common;
        return static_cast<std::uint8_t>(2 * (n_ - 1 - common) + 1);
    }

  private:
    int digit(int w, int i) const {
        return i < 0 ? w % k_ : w / pow_[static_cast<std::size_t>(i)] % k_;
    }

    int k_ = 2, n_ = 1, ups_ = 2, lowest_ = -1;
    std::vector<int> pow_;  // k^i
    std::vector<std::int8_t> level_;
    std::vector<int> label_;  // w
};

}  // namespace

std::shared_ptr<const RouteRule> fat_tree_rule(const Topology &t) {
    return std::make_shared<FatTreeRule>(t);
}

}  // namespace sansim
