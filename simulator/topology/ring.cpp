// A ring of routers, `per` nodes on each: ports 0..per-1 to nodes, per to the next router,
// per+1 from the previous one.
#include "topology/topology.hpp"

namespace sansim {

Topology make_ring(int routers, int per, int fabrics) {
    if (routers < 3 || per < 1) throw TopologyError("ring: needs >= 3 routers and >= 1 node each");
    Topology t;
    t.name = "ring:" + std::to_string(routers) + "," + std::to_string(per);
    t.nodes = routers * per;
    t.fabrics = fabrics;
    for (int f = 0; f < fabrics; ++f) {
        const int base = static_cast<int>(t.routers.size());
        for (int r = 0; r < routers; ++r) t.add_router(per + 2, f);
        for (int n = 0; n < t.nodes; ++n) t.connect(n, f, t.router_dev(base + n / per), n % per);
        for (int r = 0; r < routers; ++r)
            t.connect(t.router_dev(base + r), per, t.router_dev(base + (r + 1) % routers), per + 1);
    }
    return t;
}

}  // namespace sansim
