// Dragonfly (Kim, Dally, Scott and Abts, 2008): g groups of a routers, p nodes per router,
// routers of a group fully connected, h global links per router. By default g = a*h + 1 and
// every pair of groups shares one global link; with fewer groups each pair shares
// a*h / (g - 1) of them. Ports: p nodes, a-1 local, h global.
#include "topology/topology.hpp"

namespace sansim {
namespace {

void check_dragonfly(int a, int p, int h, int g) {
    if (a < 1 || p < 1 || h < 1) throw TopologyError("dragonfly: needs a, p, h >= 1");
    if (g < 2 || g > a * h + 1 || (a * h) % (g - 1) != 0)
        throw TopologyError("dragonfly: g = " + std::to_string(g) +
                            " groups need 2 <= g <= a*h + 1 = " + std::to_string(a * h + 1) +
                            " and a*h = " + std::to_string(a * h) +
                            " global links per group a multiple of g - 1");
    if (static_cast<long>(g) * a * p > 65536) throw TopologyError("dragonfly: too many nodes");
}

}  // namespace

Topology make_dragonfly(int a, int p, int h, int fabrics, int groups) {
    const bool default_groups = groups == 0;
    const int g = default_groups ? a * h + 1 : groups;
    check_dragonfly(a, p, h, g);
    Topology t;
    t.name = "dragonfly:" + std::to_string(a) + "," + std::to_string(p) + "," + std::to_string(h) +
             (default_groups ? "" : "," + std::to_string(g));
    t.nodes = g * a * p;
    t.fabrics = fabrics;
    t.generator = "dragonfly";
    t.generator_args = {a, p, h, g};
    const int ports = p + (a - 1) + h;
    for (int f = 0; f < fabrics; ++f) {
        const int base = static_cast<int>(t.routers.size());
        for (int r = 0; r < g * a; ++r) {
            const int id = t.add_router(ports, f);
            t.routers[static_cast<std::size_t>(id)].group = r / a;
        }
        auto id = [&](int grp, int r) { return t.router_dev(base + grp * a + r); };
        for (int n = 0; n < t.nodes; ++n) t.connect(n, f, t.router_dev(base + n / p), n % p);
        for (int grp = 0; grp < g; ++grp)
            for (int i = 0; i < a; ++i)
                for (int j = i + 1; j < a; ++j) t.connect(id(grp, i), p + j - 1, id(grp, j), p + i);
        // Global link x of group G goes to group G + (x mod (g-1)) + 1, where it is link
        // (x div (g-1)) * (g-1) + g - (x mod (g-1)) - 2: with g = a*h + 1, to G + x + 1 as
        // link g - x - 2.
        for (int grp = 0; grp < g; ++grp)
            for (int x = 0; x < a * h; ++x) {
                const int offset = x % (g - 1) + 1;
                const int other = (grp + offset) % g;
                if (other < grp) continue;
                const int y = x / (g - 1) * (g - 1) + g - offset - 1;
                t.connect(id(grp, x / h), p + a - 1 + x % h, id(other, y / h), p + a - 1 + y % h);
            }
    }
    return t;
}

}  // namespace sansim
