// 2-D meshes (dimension-order routing) and tori (up*/down* routing, deadlock free without
// virtual channels). Ports: 0..per-1 nodes, then +x, -x, +y, -y. A torus ring's wrap-around
// link is its dateline (for dimension order on a torus with the dateline lane rule).
#include "topology/topology.hpp"

namespace sansim {

Topology make_mesh(int xs, int ys, int per, bool torus, int fabrics) {
    if (xs < 1 || ys < 1 || xs * ys < 2 || per < 1)
        throw TopologyError("mesh/torus: needs X*Y >= 2 routers and >= 1 node each");
    Topology t;
    t.name = std::string(torus ? "torus:" : "mesh:") + std::to_string(xs) + "," +
             std::to_string(ys) + "," + std::to_string(per);
    t.nodes = xs * ys * per;
    t.fabrics = fabrics;
    t.routing = torus ? "updown" : "xy";
    t.generator = torus ? "torus" : "mesh";
    t.generator_args = {xs, ys, per};
    for (int f = 0; f < fabrics; ++f) {
        const int base = static_cast<int>(t.routers.size());
        auto id = [&](int x, int y) { return base + y * xs + x; };
        for (int y = 0; y < ys; ++y)
            for (int x = 0; x < xs; ++x) {
                const int r = t.add_router(per + 4, f);
                t.routers[static_cast<std::size_t>(r)].x = x;
                t.routers[static_cast<std::size_t>(r)].y = y;
                t.routers[static_cast<std::size_t>(r)].placed = true;
            }
        for (int n = 0; n < t.nodes; ++n) t.connect(n, f, t.router_dev(base + n / per), n % per);
        for (int y = 0; y < ys; ++y)
            for (int x = 0; x < xs; ++x) {
                const bool wrap_x = torus && xs > 2, wrap_y = torus && ys > 2;
                if (x + 1 < xs || wrap_x) {
                    t.connect(t.router_dev(id(x, y)), per, t.router_dev(id((x + 1) % xs, y)),
                              per + 1);
                    t.links.back().dateline = x + 1 == xs;
                }
                if (y + 1 < ys || wrap_y) {
                    t.connect(t.router_dev(id(x, y)), per + 2, t.router_dev(id(x, (y + 1) % ys)),
                              per + 3);
                    t.links.back().dateline = y + 1 == ys;
                }
            }
    }
    return t;
}

}  // namespace sansim
