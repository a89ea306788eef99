// Minimal routing on the dragonfly generator's fabric, from group and router: within a group
// the local link to the destination's router; toward another group a global link into it,
// taken at once or after one local hop, never a second global link. Group G's global link x
// (router x / h, port p + a - 1 + x mod h) leads to group G + (x mod (g-1)) + 1, so the links
// from G into another group are every (g-1)-th, and on each router they come in port order.
#include <limits>

#include "topology/route_rules.hpp"

namespace sansim {
namespace {

constexpr int kFar = std::numeric_limits<int>::max() / 4;

class DragonflyRule : public RouteRule {
  public:
    DragonflyRule(const Topology &t)
        : a_(t.generator_args[0]),
          p_(t.generator_args[1]),
          h_(t.generator_args[2]),
          g_(t.generator_args[3]),
          routers_(g_ * a_) {}

    std::uint16_t port(int u, int phase, int d) const override {
        const int r = u % routers_, rd = d / p_;
        if (r == rd) return static_cast<std::uint16_t>(d % p_);
        const int i = r % a_, j = rd % a_;
        if (r / a_ == rd / a_) return local_port(i, j);
        if (phase == 1) return Routing::kNone;  // a global link taken: no second one
        const Toward to = toward(r / a_, rd);
        const int dist = to.distance(i);
        // Next hops one router nearer, in port order: local ones, then global ones.
        int count = 0;
        for_candidates(to, i, dist, [&](int) { ++count; });
        if (count == 0) return Routing::kNone;
        int pick = count == 1
                       ? 0
                       : static_cast<int>(tie_break(-1, u, d, static_cast<std::size_t>(count), -1));
        int port = Routing::kNone;
        for_candidates(to, i, dist, [&](int q) {
            if (pick-- == 0) port = q;
        });
        return static_cast<std::uint16_t>(port);
    }

    std::uint8_t hops(int, int s, int d) const override {
        const int rs = s / p_, rd = d / p_;
        if (rs == rd) return 1;
        if (rs / a_ == rd / a_) return 2;
        const int dist = toward(rs / a_, rd).distance(rs % a_);
        return dist >= kFar ? Routing::kUnreachable : static_cast<std::uint8_t>(dist);
    }

  private:
    // The global links from a group into the destination's: the first one's index, their
    // step and count, and the routers crossed past each, from where it lands (1 at the
    // destination's router, else 2). best/second: the least such figure on any router of the
    // group and on any other than best_router.
    struct Toward {
        int first = 0, step = 1, count = 0, h = 1, g = 2, target = 0;
        int best = kFar, best_router = -1, second = kFar;
        int landing(int x) const {  // router (in its group) where link x lands
            const int offset = x % (g - 1) + 1;
            return (x / (g - 1) * (g - 1) + g - offset - 1) / h;
        }
        int past(int x) const { return landing(x) == target ? 1 : 2; }
        // The least over router i's own links (kFar: none).
        int own(int i) const {
            int b = kFar;
            for (int m = 0; m < count; ++m) {
                const int x = first + m * step;
                if (x / h == i) b = std::min(b, past(x));
            }
            return b;
        }
        // Routers crossed from router i of the group (in phase 0), itself included.
        int distance(int i) const {
            const int other = i == best_router ? second : best;
            return std::min(own(i) + 1, other + 2);
        }
    };

    Toward toward(int group, int rd) const {
        Toward to;
        const int offset = (rd / a_ - group + g_) % g_;
        to.first = offset - 1;
        to.step = g_ - 1;
        to.count = a_ * h_ / (g_ - 1);
        to.h = h_;
        to.g = g_;
        to.target = rd % a_;
        for (int m = 0; m < to.count; ++m) {
            const int x = to.first + m * to.step, owner = x / h_, v = to.past(x);
            if (v < to.best) {
                if (owner != to.best_router) to.second = to.best;
                to.best = v;
                to.best_router = owner;
            } else if (owner != to.best_router) {
                to.second = std::min(to.second, v);
            }
        }
        return to;
    }

    // Calls visit(port) for each next hop from router i one router nearer, in port order.
    template <class Visit>
    void for_candidates(const Toward &to, int i, int dist, Visit visit) const {
        int last = -1;  // routers with links come in increasing order; each once
        for (int m = 0; m < to.count; ++m) {
            const int owner = (to.first + m * to.step) / h_;
            if (owner == i || owner == last) continue;
            last = owner;
            if (to.distance(owner) == dist - 1) visit(local_port(i, owner));
        }
        for (int m = 0; m < to.count; ++m) {
            const int x = to.first + m * to.step;
            if (x / h_ == i && to.past(x) == dist - 1) visit(p_ + a_ - 1 + x % h_);
        }
    }

    std::uint16_t local_port(int i, int j) const {
        return static_cast<std::uint16_t>(p_ + (j < i ? j : j - 1));
    }

    int a_, p_, h_, g_, routers_;
};

}  // namespace

std::shared_ptr<const RouteRule> dragonfly_rule(const Topology &t) {
    return std::make_shared<DragonflyRule>(t);
}

}  // namespace sansim
