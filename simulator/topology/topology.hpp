// A fabric as data: nodes (NICs, one port per fabric), routers, links and a routing rule.
// Generators and the file reader both produce this; routing.cpp turns it into tables.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace sansim {

// Devices are numbered nodes first (0..nodes-1), then routers (nodes + r).
struct Endpoint {
    int dev = -1;
    int port = -1;
};

struct LinkSpec {
    Endpoint a, b;
    double mbps = 0.0;       // 0: the model's default link bandwidth
    double delay_ns = -1.0;  // <0: the model's default propagation delay
    int line = 0;            // source line in a topology file, 0 for generators
};

struct RouterSpec {
    std::string name;
    int ports = 0;
    int fabric = 0;  // 0 = X, 1 = Y
    int level = -1;  // rank for up*/down* routing (0 = top); -1: breadth-first from a root
    int x = 0, y = 0;  // coordinates for dimension-order routing
    bool placed = false;  // x and y were given
    int line = 0;
};

struct RouteSpec {
    int router = 0;
    int dst = 0;
    int port = 0;
    int line = 0;
};

struct Topology {
    std::string name;
    int nodes = 0;
    int fabrics = 1;  // ports per node
    int nodes_line = 0;
    std::vector<RouterSpec> routers;
    std::vector<LinkSpec> links;
    // "updown" (deadlock free on any fabric), "xy" (dimension order, meshes),
    // "shortest" (minimal, may deadlock on cycles), "table" (explicit routes only).
    std::string routing = "updown";
    std::vector<RouteSpec> routes;

    int router_dev(int r) const { return nodes + r; }
    int devices() const { return nodes + static_cast<int>(routers.size()); }
    bool is_node(int dev) const { return dev < nodes; }
    int ports_of(int dev) const {
        return is_node(dev) ? fabrics : routers[static_cast<std::size_t>(dev - nodes)].ports;
    }
    std::string dev_name(int dev) const {
        return is_node(dev) ? "n" + std::to_string(dev)
                            : routers[static_cast<std::size_t>(dev - nodes)].name;
    }
    int add_router(int ports, int fabric, std::string name = {}) {
        RouterSpec r;
        r.ports = ports;
        r.fabric = fabric;
        r.name = name.empty() ? "r" + std::to_string(routers.size()) : std::move(name);
        routers.push_back(r);
        return static_cast<int>(routers.size()) - 1;
    }
    void connect(int dev_a, int port_a, int dev_b, int port_b) {
        LinkSpec l;
        l.a = {dev_a, port_a};
        l.b = {dev_b, port_b};
        links.push_back(l);
    }
};

// A topology that cannot be built or routed; the message names the file line when known.
class TopologyError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Generators (topology/<name>.cpp). Parameters are validated; bad ones throw TopologyError.
Topology make_crossbar(int nodes, int fabrics);
Topology make_ring(int routers, int nodes_per_router, int fabrics);
Topology make_mesh(int x, int y, int nodes_per_router, bool torus, int fabrics);
Topology make_fat_tree(int k, int n, int fabrics);
Topology make_dragonfly(int a, int p, int h, int fabrics);
Topology make_dual_fabric(int nodes);
Topology make_chain(int hops);  // two nodes joined through `hops` routers (validation)

// Reads a topology file; errors name file:line.
Topology read_topology_file(const std::string &path);
Topology parse_topology(const std::string &text, const std::string &origin);

// Builds a generator from a spec such as "fattree:4,3" or "torus:8,8,1" or a file path.
Topology make_topology(const std::string &spec, int fabrics);

}  // namespace sansim
