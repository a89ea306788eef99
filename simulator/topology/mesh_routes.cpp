// Dimension order on the mesh and torus generator's fabrics, from coordinates: X first, the
// shorter way round a torus ring (both ways equal: chosen as the tables choose among equal
// next hops), then Y. Ports: nodes, then +x, -x, +y, -y.
#include "topology/route_rules.hpp"

namespace sansim {
namespace {

class MeshRule : public RouteRule {
  public:
    MeshRule(const Topology &t)
        : xs_(t.generator_args[0]), ys_(t.generator_args[1]), per_(t.generator_args[2]) {
        const bool torus = t.generator == "torus";
        wrap_x_ = torus && xs_ > 2;
        wrap_y_ = torus && ys_ > 2;
    }

    std::uint16_t port(int u, int phase, int d) const override {
        const int r = u % (xs_ * ys_), rd = d / per_;
        if (r == rd) return static_cast<std::uint16_t>(d % per_);
        const int x = r % xs_, xd = rd % xs_;
        if (x != xd) {
            if (phase == 1) return Routing::kNone;  // Y taken: X no more
            return static_cast<std::uint16_t>(per_ + way(x, xd, xs_, wrap_x_, u, d));
        }
        return static_cast<std::uint16_t>(per_ + 2 + way(r / xs_, rd / xs_, ys_, wrap_y_, u, d));
    }

    std::uint8_t hops(int, int s, int d) const override {
        const int rs = s / per_, rd = d / per_;
        return static_cast<std::uint8_t>(ring(rs % xs_, rd % xs_, xs_, wrap_x_) +
                                         ring(rs / xs_, rd / xs_, ys_, wrap_y_) + 1);
    }

  private:
    static int ring(int from, int to, int size, bool wrap) {
        const int ahead = (to - from + size) % size;
        return wrap ? std::min(ahead, size - ahead) : (to > from ? to - from : from - to);
    }
    // 0: the + link, 1: the - link.
    static int way(int from, int to, int size, bool wrap, int u, int d) {
        if (!wrap) return to > from ? 0 : 1;
        const int ahead = (to - from + size) % size;
        if (ahead != size - ahead) return ahead < size - ahead ? 0 : 1;
        return static_cast<int>(tie_break(-1, u, d, 2, -1));
    }

    int xs_, ys_, per_;
    bool wrap_x_ = false, wrap_y_ = false;
};

}  // namespace

std::shared_ptr<const RouteRule> mesh_rule(const Topology &t) {
    return std::make_shared<MeshRule>(t);
}

}  // namespace sansim
