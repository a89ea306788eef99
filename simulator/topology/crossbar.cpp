// One N-port crossbar router per fabric: the ideal fabric the paper's Figure 5 falls short of.
#include "topology/topology.hpp"

namespace sansim {

Topology make_crossbar(int nodes, int fabrics) {
    if (nodes < 2) throw TopologyError("crossbar: needs at least 2 nodes");
    Topology t;
    t.name = "crossbar:" + std::to_string(nodes);
    t.nodes = nodes;
    t.fabrics = fabrics;
    for (int f = 0; f < fabrics; ++f) {
        const int r = t.add_router(nodes, f, f == 0 ? "x0" : "y0");
        for (int n = 0; n < nodes; ++n) t.connect(n, f, t.router_dev(r), n);
    }
    return t;
}

Topology make_chain(int hops) {
    if (hops < 0) throw TopologyError("chain: hop count must be >= 0");
    Topology t;
    t.name = "chain:" + std::to_string(hops);
    t.nodes = 2;
    if (hops == 0) {
        t.connect(0, 0, 1, 0);
        return t;
    }
    for (int h = 0; h < hops; ++h) t.add_router(2, 0);
    t.connect(0, 0, t.router_dev(0), 0);
    for (int h = 0; h + 1 < hops; ++h) t.connect(t.router_dev(h), 1, t.router_dev(h + 1), 0);
    t.connect(t.router_dev(hops - 1), 1, 1, 0);
    return t;
}

}  // namespace sansim
