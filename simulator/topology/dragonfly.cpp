// Dragonfly: g = a*h + 1 groups of a routers, p nodes per router, routers of a group fully
// connected, one global link between every pair of groups. Ports: p nodes, a-1 local, h global.
#include "topology/topology.hpp"

namespace sansim {

Topology make_dragonfly(int a, int p, int h, int fabrics) {
    if (a < 1 || p < 1 || h < 1) throw TopologyError("dragonfly: needs a, p, h >= 1");
    const int g = a * h + 1;
    if (static_cast<long>(g) * a * p > 65536) throw TopologyError("dragonfly: too many nodes");
    Topology t;
    t.name = "dragonfly:" + std::to_string(a) + "," + std::to_string(p) + "," + std::to_string(h);
    t.nodes = g * a * p;
    t.fabrics = fabrics;
    const int ports = p + (a - 1) + h;
    for (int f = 0; f < fabrics; ++f) {
        const int base = static_cast<int>(t.routers.size());
        for (int r = 0; r < g * a; ++r) t.add_router(ports, f);
        auto id = [&](int grp, int r) { return t.router_dev(base + grp * a + r); };
        for (int n = 0; n < t.nodes; ++n) t.connect(n, f, t.router_dev(base + n / p), n % p);
        for (int grp = 0; grp < g; ++grp)
            for (int i = 0; i < a; ++i)
                for (int j = i + 1; j < a; ++j) t.connect(id(grp, i), p + j - 1, id(grp, j), p + i);
        // Global link x of group G goes to group G + x + 1, where it is link g - x - 2.
        for (int grp = 0; grp < g; ++grp)
            for (int x = 0; x < a * h; ++x) {
                const int other = (grp + x + 1) % g;
                if (other < grp) continue;
                const int y = g - x - 2;
                t.connect(id(grp, x / h), p + a - 1 + x % h, id(other, y / h), p + a - 1 + y % h);
            }
    }
    return t;
}

}  // namespace sansim
