// Valiant routing's first leg: from each router, toward each other group, the intermediate
// nodes a packet may aim at (attached to the routers of that group nearest the router). The
// second leg, and the first up to the intermediate, follow the minimal tables.
#pragma once
#include <cstdint>
#include <vector>

#include "topology/routing.hpp"
#include "topology/topology.hpp"

namespace sansim {

struct Intermediates {
    int groups = 0;
    std::vector<int> router_group;  // [router]
    // The candidates from router r toward group g: nodes[first[r * groups + g] ..
    // first[r * groups + g + 1]); none for r's own group.
    std::vector<std::uint32_t> first;
    std::vector<int> nodes;

    int candidates(int router, int group) const {
        const auto i = static_cast<std::size_t>(router * groups + group);
        return static_cast<int>(first[i + 1] - first[i]);
    }
    int candidate(int router, int group, int k) const {
        return nodes[first[static_cast<std::size_t>(router * groups + group)] +
                     static_cast<std::size_t>(k)];
    }
};

// Needs every router's group (compute_routing checks it for routing 'valiant'). On a
// dragonfly the nearest routers of another group are those its global links from the
// router's group land on, so both legs are minimal dragonfly paths.
Intermediates valiant_intermediates(const Topology &topo, const Routing &routing);

}  // namespace sansim
