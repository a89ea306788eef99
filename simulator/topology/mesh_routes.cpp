// Dimension order on the mesh and torus generator's fabrics, from coordinates: X first, the
// shorter way round a torus ring (both ways equal: chosen as the tables choose among equal
// next hops), then Y, then Z. Ports: nodes, then + and - for each dimension in turn.
#include <algorithm>

#include "topology/route_rules.hpp"

namespace sansim {
namespace {

class MeshRule : public RouteRule {
  public:
    MeshRule(const Topology &t) : per_(t.generator_args[0]) {
        const bool torus = t.generator == "torus";
        routers_ = 1;
        for (std::size_t k = 1; k < t.generator_args.size(); ++k) {
            const int size = t.generator_args[k];
            dims_.push_back(Dim{size, routers_, torus && size > 2});
            routers_ *= size;
        }
    }

    std::uint16_t port(int u, int phase, int d) const override {
        const int r = u % routers_, rd = d / per_;
        if (r == rd) return static_cast<std::uint16_t>(d % per_);
        for (std::size_t k = 0; k < dims_.size(); ++k) {
            const int c = dims_[k].of(r), cd = dims_[k].of(rd);
            if (c == cd) continue;
            if (k == 0 && phase == 1) return Routing::kNone;  // Y or Z taken: X no more
            return static_cast<std::uint16_t>(per_ + 2 * static_cast<int>(k) +
                                              way(c, cd, dims_[k], u, d));
        }
        return Routing::kNone;
    }

    std::uint8_t hops(int, int s, int d) const override {
        const int rs = s / per_, rd = d / per_;
        int h = 1;
        for (const Dim &dim : dims_) h += ring(dim.of(rs), dim.of(rd), dim);
        return static_cast<std::uint8_t>(h);
    }

  private:
    struct Dim {
        int size, stride;
        bool wrap;
        int of(int r) const { return r / stride % size; }
    };

    static int ring(int from, int to, const Dim &dim) {
        const int ahead = (to - from + dim.size) % dim.size;
        return dim.wrap ? std::min(ahead, dim.size - ahead) : (to > from ? to - from : from - to);
    }
    // 0: the + link, 1: the - link.
    static int way(int from, int to, const Dim &dim, int u, int d) {
        if (!dim.wrap) return to > from ? 0 : 1;
        const int ahead = (to - from + dim.size) % dim.size;
        if (ahead != dim.size - ahead) return ahead < dim.size - ahead ? 0 : 1;
        return static_cast<int>(tie_break(-1, u, d, 2, -1));
    }

    int per_, routers_ = 1;
    std::vector<Dim> dims_;
};

}  // namespace

std::shared_ptr<const RouteRule> mesh_rule(const Topology &t) {
    return std::make_shared<MeshRule>(t);
}

}  // namespace sansim
