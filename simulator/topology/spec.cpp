// Topology specs on the command line: "NAME:ARGS" for a generator, anything else is a file.
// Either is refused, naming the figures, when its model would not fit in memory.
#include <sstream>

#include "topology/topology.hpp"

namespace sansim {

namespace {

int number(const std::string &spec, const std::string &item) {
    try {
        std::size_t used = 0;
        const int v = std::stoi(item, &used);
        if (used == item.size()) return v;
    } catch (const std::exception &) {
    }
    throw TopologyError("topology '" + spec + "': '" + item + "' is not a number");
}

Topology checked_file(const std::string &spec, const std::string &path) {
    Topology t = read_topology_file(path);
    check_footprint(spec, topology_size(t));
    return t;
}

}  // namespace

Topology make_topology(const std::string &spec, int fabrics) {
    const auto colon = spec.find(':');
    if (colon == std::string::npos) return checked_file(spec, spec);
    const std::string name = spec.substr(0, colon);
    if (name == "file") return checked_file(spec, spec.substr(colon + 1));
    std::string args = spec.substr(colon + 1);
    // Meshes and tori: "SIZES/NODES_PER_ROUTER", the sizes a list of one to three.
    int per = 1;
    const auto slash = args.find('/');
    if ((name == "mesh" || name == "torus") && slash != std::string::npos) {
        per = number(spec, args.substr(slash + 1));
        args.resize(slash);
    }
    std::vector<int> a;
    std::stringstream ss(args);
    for (std::string item; std::getline(ss, item, ',');) {
        a.push_back(number(spec, item));
    }
    const bool grid = name == "mesh" || name == "torus";
    if (grid) a.insert(a.begin(), per);  // the generator's arguments: {per, sizes...}
    auto need = [&](std::size_t lo, std::size_t hi, const char *usage) {
        if (a.size() < lo || a.size() > hi)
            throw TopologyError("topology '" + spec + "': usage " + usage);
    };
    // Sizes first, from the arguments alone: the generator allocates as it builds.
    check_footprint(spec, generator_size(name, a, name == "dual" ? 2 : fabrics));
    if (name == "crossbar") {
        need(1, 1, "crossbar:NODES");
        return make_crossbar(a[0], fabrics);
    }
    if (name == "ring") {
        need(1, 2, "ring:ROUTERS[,NODES_PER_ROUTER]");
        return make_ring(a[0], a.size() > 1 ? a[1] : 1, fabrics);
    }
    if (grid) {
        need(2, 4, "mesh:X[,Y[,Z]][/NODES_PER_ROUTER]");
        return make_mesh(std::vector<int>(a.begin() + 1, a.end()), a[0], name == "torus", fabrics);
    }
    if (name == "fattree") {
        need(2, 3, "fattree:K,N[,OVERSUB] (k-ary n-tree, K^N nodes; OVERSUB:1 at the leaves)");
        return make_fat_tree(a[0], a[1], fabrics, a.size() > 2 ? a[2] : 1);
    }
    if (name == "dragonfly") {
        need(3, 4, "dragonfly:A,P,H[,G]");
        if (a.size() > 3 && a[3] < 2) throw TopologyError("topology '" + spec + "': G >= 2");
        return make_dragonfly(a[0], a[1], a[2], fabrics, a.size() > 3 ? a[3] : 0);
    }
    if (name == "dual") {
        need(1, 1, "dual:NODES");
        return make_dual_fabric(a[0]);
    }
    if (name == "chain") {
        need(1, 1, "chain:ROUTERS");
        return make_chain(a[0]);
    }
    throw TopologyError(
        "unknown topology '" + name +
        "' (crossbar, ring, mesh, torus, fattree, dragonfly, dual, chain, file:PATH)");
}

}  // namespace sansim
