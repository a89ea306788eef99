// Two asymmetric fabrics of 6-port routers in the style of the paper's Figure 2: periphery
// routers take 4 nodes in and 2 links out ("4-in 2-out"), core routers take 4 periphery links
// and join a ring. The fabrics differ in which nodes share a periphery router, in which cores
// a periphery router reaches and in the ring order, so most pairs have a shorter path in one
// of them. 64 nodes use 48 routers, as the Sandia cluster did.
#include <numeric>

#include "topology/topology.hpp"

namespace sansim {

Topology make_dual_fabric(int nodes) {
    if (nodes < 16 || nodes % 8 != 0)
        throw TopologyError("dual: node count must be a multiple of 8, at least 16");
    Topology t;
    t.name = "dual:" + std::to_string(nodes);
    t.nodes = nodes;
    t.fabrics = 2;
    const int P = nodes / 4;  // periphery routers per fabric
    const int C = P / 2;      // core routers per fabric
    for (int f = 0; f < 2; ++f) {
        const int base = static_cast<int>(t.routers.size());
        const std::string fx = f == 0 ? "x" : "y";
        for (int i = 0; i < P; ++i) {
            const int r = t.add_router(6, f, fx + "p" + std::to_string(i));
            t.routers[static_cast<std::size_t>(r)].level = 1;
        }
        for (int j = 0; j < C; ++j) {
            const int r = t.add_router(6, f, fx + "c" + std::to_string(j));
            t.routers[static_cast<std::size_t>(r)].level = 0;
        }
        auto periphery = [&](int i) { return t.router_dev(base + i); };
        auto core = [&](int j) { return t.router_dev(base + P + j); };
        for (int n = 0; n < nodes; ++n) {
            if (f == 0)
                t.connect(n, 0, periphery(n / 4), n % 4);
            else
                t.connect(n, 1, periphery(n % P), n / P);
        }
        const int spread = f == 0 ? 1 : std::max(1, C / 2);
        std::vector<int> next_down(static_cast<std::size_t>(C), 0);
        for (int i = 0; i < P; ++i)
            for (int u = 0; u < 2; ++u) {
                const int j = (i + u * spread) % C;
                t.connect(periphery(i), 4 + u, core(j), next_down[static_cast<std::size_t>(j)]++);
            }
        int stride = f == 0 ? 1 : 3;
        while (std::gcd(stride, C) != 1) ++stride;
        if (C >= 3) {
            for (int j = 0; j < C; ++j)
                t.connect(core(j * stride % C), 4, core((j + 1) * stride % C), 5);
        } else {
            t.connect(core(0), 4, core(1), 5);
        }
    }
    return t;
}

}  // namespace sansim
