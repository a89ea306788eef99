// Routing rules computed from addresses, as the switches of regular fabrics route: fat trees
// by destination digits (up*/down*, d-mod-k or hashed ties), dragonflies by group and router
// (minimal, and Valiant's legs), meshes and tori by dimension order. Each gives the very ports
// and hop counts the tables would, in memory that grows with the routers, not with the nodes.
#pragma once
#include <memory>

#include "topology/routing.hpp"
#include "topology/topology.hpp"

namespace sansim {

// The rule for a topology whose wiring is still its generator's and whose routing the rule
// implements; null otherwise (tables then).
std::shared_ptr<const RouteRule> make_route_rule(const Topology &topo);

// The rules themselves, for a generator's arguments (topology/<name>_routes.cpp).
std::shared_ptr<const RouteRule> fat_tree_rule(const Topology &topo);
std::shared_ptr<const RouteRule> dragonfly_rule(const Topology &topo);
std::shared_ptr<const RouteRule> mesh_rule(const Topology &topo);

}  // namespace sansim
