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
    bool dateline = false;   // a torus ring's wrap-around link (the dateline virtual-lane rule)
    int line = 0;            // source line in a topology file, 0 for generators
};

struct RouterSpec {
    std::string name;
    int ports = 0;
    int fabric = 0;           // 0 = X, 1 = Y
    int level = -1;           // rank for up*/down* routing (0 = top); -1: breadth-first from a root
    int x = 0, y = 0, z = 0;  // coordinates for dimension-order routing
    bool placed = false;      // x and y (and z) were given
    int group = -1;           // dragonfly group: Valiant routing and the group virtual-lane rule
    int line = 0;
};

struct RouteSpec {
    int router = 0;
    int dst = 0;
    int port = 0;
    int line = 0;
};

// A topology's own figures for the model, used where the command line gives none (a file's
// "defaults" and "flow_control" lines). Unset: 0, or -1 for delays, or empty.
struct FabricDefaults {
    double link_mbps = 0;
    double link_delay_ns = -1;
    double hop_latency_ns = -1;  // the switch delay
    std::string flow_control;    // packet | credit
    int vls = 0;
    int vl_buffer_bytes = 0;
    int credit_bytes = 0;
};

struct Topology {
    std::string name;
    int nodes = 0;
    int fabrics = 1;  // ports per node
    int nodes_line = 0;
    std::vector<RouterSpec> routers;
    std::vector<LinkSpec> links;
    // "updown" (deadlock free on any fabric), "xy" (dimension order, meshes),
    // "shortest" (minimal, may deadlock on cycles), "minimal" (dragonflies: shortest paths
    // crossing at most one link between groups), "valiant" (minimal to a random intermediate
    // group, then minimal to the destination), "table" (explicit routes only).
    std::string routing = "updown";
    std::vector<RouteSpec> routes;
    // Which virtual lane a packet takes on each link: "none" (lane 0 throughout), "dateline"
    // (tori: lane 1 after crossing a ring's wrap-around link, back to lane 0 on turning into
    // another dimension), "group" (one lane more per link between groups: dragonflies),
    // "spread" (each packet keeps lane destination mod lanes throughout, as InfiniBand maps
    // service levels to lanes: packets for different destinations pass each other).
    std::string vl_rule = "none";
    // Among equal next hops: "hash" (of router and destination) or "dmodk" (destination
    // digits by level: fat trees' d-mod-k; routers without a level hash).
    std::string ties = "hash";
    FabricDefaults defaults;
    // The generator that built it and its arguments (fabrics aside), where one did: routing
    // computes the generator's rule from addresses while the wiring is still its own.
    std::string generator;
    std::vector<int> generator_args;

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
// dims: one to three sizes (x, y, z); per: nodes on each router.
Topology make_mesh(const std::vector<int> &dims, int per, bool torus, int fabrics);
// oversub: leaf routers have k down links and k / oversub up links (k a multiple of oversub).
Topology make_fat_tree(int k, int n, int fabrics, int oversub = 1);
// g groups (0: a * h + 1, one global link between every pair of groups); a * h must be a
// multiple of g - 1.
Topology make_dragonfly(int a, int p, int h, int fabrics, int g = 0);
Topology make_dual_fabric(int nodes);
Topology make_chain(int hops);  // two nodes joined through `hops` routers (validation)

// Reads a topology file; errors name file:line.
Topology read_topology_file(const std::string &path);
Topology parse_topology(const std::string &text, const std::string &origin);

// Builds a generator from a spec such as "fattree:4,3" or "torus:8,8/2" or a file path.
// Refuses (TopologyError) a topology whose model would not fit in memory, before building it.
Topology make_topology(const std::string &spec, int fabrics);

// What a topology holds, counted without building it (topology/footprint.cpp).
struct TopologySize {
    double nodes = 0, routers = 0;
    double ports = 0;      // router ports, summed
    double max_ports = 0;  // the widest router's
    double links = 0;
    double fabrics = 1;
    // Routed by tables (per router and destination, per pair); false: by a rule from addresses.
    bool tables = true;
};
// A generator's counts from its arguments (zeros for an unknown name); mesh and torus take
// {nodes per router, sizes...}, as Topology::generator_args records them.
TopologySize generator_size(const std::string &name, const std::vector<int> &args, int fabrics);
TopologySize topology_size(const Topology &t);
// Bytes the description, routing tables and network of such a topology take, about.
double model_bytes(const TopologySize &s);
// The memory a run may use: physical memory, or a lower cgroup or ulimit figure; *what
// names it ("this machine has 23 GiB").
double memory_limit(std::string *what);
// Throws TopologyError naming both figures when model_bytes exceeds half of memory_limit.
void check_footprint(const std::string &spec, const TopologySize &s);
// Generators with a routing rule are checked as routed by it; once the routing is settled
// (--routing), one that will be routed by tables after all is checked again with them.
void check_routing_footprint(const std::string &spec, const Topology &topo);

}  // namespace sansim
