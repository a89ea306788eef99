// Routing from a topology: per router, per phase, per destination node, an output port, and
// the routers crossed between two nodes. The phase lets one rule express up*/down* and
// dimension-order routing: some channels may be taken only before the packet has taken any
// "phase-1" channel (up links, X links). Fat trees, dragonflies and meshes as their generators
// build them compute both from addresses, as their switches do (topology/route_rules.hpp);
// other fabrics keep tables.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace sansim {

struct PortPeer {
    int dev = -1;
    int port = -1;
    int link = -1;  // index into Topology::links
};

// A routing rule computed from addresses: the same ports and hop counts the tables would hold.
class RouteRule {
  public:
    virtual ~RouteRule() = default;
    virtual std::uint16_t port(int router, int phase, int dst) const = 0;
    virtual std::uint8_t hops(int fabric, int src, int dst) const = 0;
};

// Among `choices` equal next hops at router `router` (whose level is `level`, -1 for none)
// toward node `dst`: d-mod-k by level where lowest >= 0 (the leaves' level under ties
// 'dmodk'), else a hash of router and destination.
std::size_t tie_break(int level, int router, int dst, std::size_t choices, int lowest);

struct Routing {
    static constexpr std::uint16_t kNone = 0xFFFF;
    static constexpr std::uint8_t kUnreachable = 0xFF;
    int nodes = 0;
    int fabrics = 1;
    // peers[dev][port]: what the port is wired to.
    std::vector<std::vector<PortPeer>> peers;
    // The rule, where the topology has one; else the tables below.
    std::shared_ptr<const RouteRule> rule;
    // table[(router * 2 + phase) * nodes + dst]
    std::vector<std::uint16_t> table;
    // to_phase1[router][port]: taking this output moves the packet into phase 1;
    // phase0_only[router][port]: a packet in phase 1 may not take it.
    std::vector<std::vector<std::uint8_t>> to_phase1;
    std::vector<std::vector<std::uint8_t>> phase0_only;
    // hops[router * nodes + dst]: routers crossed from a node attached to the router (on the
    // router's fabric) to dst, kUnreachable if none: what a source sees depends only on its
    // first router, so routers x nodes bytes, not nodes^2 per fabric.
    std::vector<std::uint8_t> hops;

    std::uint16_t port(int router, int phase, int dst) const {
        return rule ? rule->port(router, phase, dst) : *entry(router, phase, dst);
    }
    // Starts fetching a table entry that will be looked up soon (rules need nothing).
    void prefetch(int router, int phase, int dst) const {
        if (!rule) __builtin_prefetch(entry(router, phase, dst));
    }
    // Every node reaches every other on every fabric (true of the rules' fabrics).
    bool all_reachable() const { return rule != nullptr; }
    const std::uint16_t *entry(int router, int phase, int dst) const {
        return &table[(static_cast<std::size_t>(router) * 2 + static_cast<std::size_t>(phase)) *
                          static_cast<std::size_t>(nodes) +
                      static_cast<std::size_t>(dst)];
    }
    std::uint8_t hop_count(int fabric, int src, int dst) const {
        if (rule) return rule->hops(fabric, src, dst);
        const PortPeer &first =
            peers[static_cast<std::size_t>(src)][static_cast<std::size_t>(fabric)];
        if (first.dev < nodes) return first.dev == dst ? 0 : kUnreachable;  // wired to a node
        return hops[static_cast<std::size_t>(first.dev - nodes) * static_cast<std::size_t>(nodes) +
                    static_cast<std::size_t>(dst)];
    }
};

// Validates the wiring (ports in range, none used twice, every node port connected) and
// computes the tables. Nodes need not reach each other: only the pairs traffic uses must
// (unreachable_pair). Throws TopologyError naming the offending line when the topology came
// from a file.
Routing compute_routing(const Topology &topo);

// Why src cannot send to dst on any fabric (and, with needs_return, hear back from dst on
// the same one), or empty when it can.
std::string unreachable_pair(const Topology &topo, const Routing &routing, int src, int dst,
                             bool needs_return);

}  // namespace sansim
