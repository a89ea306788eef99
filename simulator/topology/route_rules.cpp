// Which rule a topology gets: its generator's, when the generator's wiring is untouched (built
// again from the recorded arguments and compared, link by link) and the routing is the one
// the rule computes.
#include "topology/route_rules.hpp"

namespace sansim {
namespace {

bool same_endpoint(Endpoint a, Endpoint b) {
    return a.dev == b.dev && a.port == b.port;
}

// The routers' ports and labels and the links' ends, what routing depends on.
bool same_wiring(const Topology &a, const Topology &b) {
    if (a.nodes != b.nodes || a.fabrics != b.fabrics || a.routers.size() != b.routers.size() ||
        a.links.size() != b.links.size())
        return false;
    for (std::size_t i = 0; i < a.routers.size(); ++i) {
        const RouterSpec &x = a.routers[i], &y = b.routers[i];
        if (x.ports != y.ports || x.level != y.level || x.group != y.group || x.x != y.x ||
            x.y != y.y || x.z != y.z)
            return false;
    }
    for (std::size_t i = 0; i < a.links.size(); ++i)
        if (!same_endpoint(a.links[i].a, b.links[i].a) ||
            !same_endpoint(a.links[i].b, b.links[i].b))
            return false;
    return true;
}

// The generator's own topology again, or nothing for a generator without a rule.
bool rebuilt_matches(const Topology &t) {
    const std::vector<int> &a = t.generator_args;
    try {
        if (t.generator == "fattree" && a.size() == 3)
            return same_wiring(t, make_fat_tree(a[0], a[1], t.fabrics, a[2]));
        if (t.generator == "dragonfly" && a.size() == 4)
            return same_wiring(t, make_dragonfly(a[0], a[1], a[2], t.fabrics, a[3]));
        if ((t.generator == "mesh" || t.generator == "torus") && a.size() >= 2)
            return same_wiring(t, make_mesh(std::vector<int>(a.begin() + 1, a.end()), a[0],
                                            t.generator == "torus", t.fabrics));
    } catch (const TopologyError &) {
        return false;
    }
    return false;
}

}  // namespace

std::shared_ptr<const RouteRule> make_route_rule(const Topology &t) {
    const bool fat_tree = t.generator == "fattree" && t.routing == "updown";
    const bool dragonfly =
        t.generator == "dragonfly" && (t.routing == "minimal" || t.routing == "valiant");
    const bool mesh = (t.generator == "mesh" || t.generator == "torus") && t.routing == "xy";
    if (!(fat_tree || dragonfly || mesh) || !rebuilt_matches(t)) return nullptr;
    if (fat_tree) return fat_tree_rule(t);
    if (dragonfly) return dragonfly_rule(t);
    return mesh_rule(t);
}

}  // namespace sansim
