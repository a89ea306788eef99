// Wiring checks and table construction (breadth-first search backwards from each destination
// over (router, phase) states; ties between equal-length next hops spread by destination).
#include "topology/routing.hpp"

#include <algorithm>
#include <deque>
#include <string>

#include "topology/route_rules.hpp"

namespace sansim {
namespace {

std::string at_line(const Topology &t, int line) {
    return line > 0 ? t.name + ":" + std::to_string(line) + ": " : "";
}

std::string port_name(const Topology &t, Endpoint e) {
    if (t.is_node(e.dev)) return t.dev_name(e.dev) + "." + (e.port == 0 ? "x" : "y");
    return t.dev_name(e.dev) + "." + std::to_string(e.port);
}

std::vector<std::vector<PortPeer>> wire(const Topology &t) {
    std::vector<std::vector<PortPeer>> peers(static_cast<std::size_t>(t.devices()));
    for (int d = 0; d < t.devices(); ++d)
        peers[static_cast<std::size_t>(d)].resize(static_cast<std::size_t>(t.ports_of(d)));
    std::vector<std::vector<int>> used_at(peers.size());
    for (std::size_t i = 0; i < t.links.size(); ++i) {
        const LinkSpec &l = t.links[i];
        for (Endpoint e : {l.a, l.b}) {
            if (e.dev < 0 || e.dev >= t.devices())
                throw TopologyError(at_line(t, l.line) + "link to an undefined device");
            if (e.port < 0 || e.port >= t.ports_of(e.dev))
                throw TopologyError(at_line(t, l.line) + "port " + std::to_string(e.port) + " of " +
                                    t.dev_name(e.dev) + " is out of range (it has " +
                                    std::to_string(t.ports_of(e.dev)) + " ports)");
            PortPeer &p = peers[static_cast<std::size_t>(e.dev)][static_cast<std::size_t>(e.port)];
            if (p.link >= 0) {
                const int prev = t.links[static_cast<std::size_t>(p.link)].line;
                throw TopologyError(at_line(t, l.line) + "port " + port_name(t, e) +
                                    " is already connected" +
                                    (prev > 0 ? " (line " + std::to_string(prev) + ")" : ""));
            }
        }
        if (l.a.dev == l.b.dev && l.a.port == l.b.port)
            throw TopologyError(at_line(t, l.line) + "link from a port to itself");
        peers[static_cast<std::size_t>(l.a.dev)][static_cast<std::size_t>(l.a.port)] =
            PortPeer{l.b.dev, l.b.port, static_cast<int>(i)};
        peers[static_cast<std::size_t>(l.b.dev)][static_cast<std::size_t>(l.b.port)] =
            PortPeer{l.a.dev, l.a.port, static_cast<int>(i)};
    }
    for (int n = 0; n < t.nodes; ++n)
        for (int f = 0; f < t.fabrics; ++f)
            if (peers[static_cast<std::size_t>(n)][static_cast<std::size_t>(f)].link < 0)
                throw TopologyError(at_line(t, t.nodes_line) + "node port " +
                                    port_name(t, Endpoint{n, f}) + " is not connected");
    for (std::size_t r = 0; r < t.routers.size(); ++r) {
        bool any = false;
        for (const PortPeer &p : peers[static_cast<std::size_t>(t.nodes) + r]) any |= p.link >= 0;
        if (!any)
            throw TopologyError(at_line(t, t.routers[r].line) + "router " + t.routers[r].name +
                                " has no links");
    }
    return peers;
}

// Up*/down* ranks: the topology's levels where given, else breadth-first distance from the
// lowest-numbered router of each connected group. Ties broken by index make "up" acyclic.
std::vector<int> updown_levels(const Topology &t, const std::vector<std::vector<PortPeer>> &peers) {
    const int R = static_cast<int>(t.routers.size());
    std::vector<int> level(static_cast<std::size_t>(R), -1);
    bool given = R > 0;
    for (const RouterSpec &r : t.routers) given &= r.level >= 0;
    if (given) {
        for (int r = 0; r < R; ++r)
            level[static_cast<std::size_t>(r)] = t.routers[static_cast<std::size_t>(r)].level;
        return level;
    }
    for (int root = 0; root < R; ++root) {
        if (level[static_cast<std::size_t>(root)] >= 0) continue;
        std::deque<int> q{root};
        level[static_cast<std::size_t>(root)] = 0;
        while (!q.empty()) {
            const int u = q.front();
            q.pop_front();
            for (const PortPeer &p : peers[static_cast<std::size_t>(t.nodes + u)]) {
                if (p.link < 0 || t.is_node(p.dev)) continue;
                const int v = p.dev - t.nodes;
                if (level[static_cast<std::size_t>(v)] >= 0) continue;
                level[static_cast<std::size_t>(v)] = level[static_cast<std::size_t>(u)] + 1;
                q.push_back(v);
            }
        }
    }
    return level;
}

// Longest path a table may take (hop counts are stored in a byte), and "not reached".
constexpr int kMaxHops = 250;
constexpr int kInf = 1 << 30;

std::size_t table_slot(int nodes, int router, int phase, int dst) {
    return (static_cast<std::size_t>(router) * 2 + static_cast<std::size_t>(phase)) *
               static_cast<std::size_t>(nodes) +
           static_cast<std::size_t>(dst);
}

void set_hops(Routing &rt, int router, int d, int hops) {
    rt.hops[static_cast<std::size_t>(router) * static_cast<std::size_t>(rt.nodes) +
            static_cast<std::size_t>(d)] = static_cast<std::uint8_t>(hops);
}

// Which router outputs move a packet into phase 1, and which it may take only in phase 0.
// up*/down*: up links stay in phase 0, down links lead to phase 1, where up links are barred;
// dimension order likewise with X and Y links; minimal and valiant (dragonflies): a link
// between groups leads to phase 1 and is barred there, links inside a group are free, so a
// path crosses at most one (the shortest path could cross two, and deadlock on the lanes the
// group rule gives); for the other rules every output is phase 1 (no restriction).
void phase_classes(const Topology &t, Routing &rt) {
    const auto &peers = rt.peers;
    const int N = t.nodes;
    const int R = static_cast<int>(t.routers.size());
    rt.to_phase1.assign(static_cast<std::size_t>(R), {});
    rt.phase0_only.assign(static_cast<std::size_t>(R), {});
    std::vector<int> level;
    if (t.routing == "updown") level = updown_levels(t, peers);
    const bool groups = t.routing == "minimal" || t.routing == "valiant";
    for (int u = 0; u < R; ++u) {
        const auto &pp = peers[static_cast<std::size_t>(N + u)];
        auto &cls = rt.to_phase1[static_cast<std::size_t>(u)];
        auto &barred = rt.phase0_only[static_cast<std::size_t>(u)];
        cls.assign(pp.size(), 1);
        barred.assign(pp.size(), 0);
        for (std::size_t q = 0; q < pp.size(); ++q) {
            if (pp[q].link < 0 || t.is_node(pp[q].dev)) continue;
            const int v = pp[q].dev - N;
            const RouterSpec &ru = t.routers[static_cast<std::size_t>(u)];
            const RouterSpec &rv = t.routers[static_cast<std::size_t>(v)];
            if (t.routing == "updown") {
                const int lu = level[static_cast<std::size_t>(u)];
                const int lv = level[static_cast<std::size_t>(v)];
                const bool up = lv < lu || (lv == lu && v < u);
                cls[q] = up ? 0 : 1;
            } else if (t.routing == "xy") {
                cls[q] = rv.x != ru.x ? 0 : 1;
            }
            barred[q] = cls[q] == 0;
            if (groups) {
                cls[q] = ru.group != rv.group ? 1 : 0;
                barred[q] = cls[q];
            }
        }
    }
}

// "routing table": the file's routes, each checked against the wiring, serve both phases.
void fill_explicit_tables(const Topology &t, Routing &rt) {
    const int N = t.nodes;
    const int R = static_cast<int>(t.routers.size());
    for (const RouteSpec &r : t.routes) {
        if (r.router < 0 || r.router >= R || r.dst < 0 || r.dst >= N)
            throw TopologyError(at_line(t, r.line) + "route names an undefined router or node");
        if (r.port < 0 || r.port >= t.routers[static_cast<std::size_t>(r.router)].ports ||
            rt.peers[static_cast<std::size_t>(N + r.router)][static_cast<std::size_t>(r.port)]
                    .link < 0)
            throw TopologyError(at_line(t, r.line) + "route uses port " + std::to_string(r.port) +
                                " of " + t.routers[static_cast<std::size_t>(r.router)].name +
                                ", which is not connected");
        for (int ph = 0; ph < 2; ++ph)
            rt.table[table_slot(N, r.router, ph, r.dst)] = static_cast<std::uint16_t>(r.port);
    }
}

// Breadth-first search backwards from node d over (router, phase) states: dist[r * 2 + ph]
// is the number of routers a packet at router r in phase ph crosses to reach d, kInf if none.
void distances_to(const Topology &t, const Routing &rt, int d, std::vector<int> &dist,
                  std::deque<int> &q) {
    const int N = t.nodes;
    const auto &peers = rt.peers;
    std::fill(dist.begin(), dist.end(), kInf);
    q.clear();
    for (int f = 0; f < t.fabrics; ++f) {
        const PortPeer &np = peers[static_cast<std::size_t>(d)][static_cast<std::size_t>(f)];
        if (t.is_node(np.dev)) continue;
        const int r = np.dev - N;
        for (int ph = 0; ph < 2; ++ph) {
            if (dist[static_cast<std::size_t>(r * 2 + ph)] == 1) continue;
            dist[static_cast<std::size_t>(r * 2 + ph)] = 1;
            q.push_back(r * 2 + ph);
        }
    }
    while (!q.empty()) {
        const int s = q.front();
        q.pop_front();
        const int v = s / 2, sv = s % 2;
        for (const PortPeer &p : peers[static_cast<std::size_t>(N + v)]) {
            if (p.link < 0 || t.is_node(p.dev)) continue;
            const int u = p.dev - N;
            const auto up = static_cast<std::size_t>(u), port = static_cast<std::size_t>(p.port);
            const int move = rt.to_phase1[up][port];
            // u in phase su --> v in phase su | move, su = 1 only where not barred: the phases
            // of u that lead to sv are [lo, hi].
            int lo = sv, hi = sv;
            if (move) {
                if (sv == 0) continue;
                lo = 0;
            }
            if (rt.phase0_only[up][port]) hi = 0;
            for (int su = lo; su <= hi; ++su) {
                int &du = dist[static_cast<std::size_t>(u * 2 + su)];
                if (du != kInf) continue;
                du = dist[static_cast<std::size_t>(s)] + 1;
                q.push_back(u * 2 + su);
            }
        }
    }
}

// The outputs of router u in phase su that lower the distance to node d by one.
void downhill_ports(const Topology &t, const Routing &rt, int d, int u, int su,
                    const std::vector<int> &dist, std::vector<int> &cand) {
    const int N = t.nodes;
    const auto &pp = rt.peers[static_cast<std::size_t>(N + u)];
    const int du = dist[static_cast<std::size_t>(u * 2 + su)];
    cand.clear();
    for (std::size_t p = 0; p < pp.size(); ++p) {
        if (pp[p].link < 0) continue;
        if (t.is_node(pp[p].dev)) {
            if (pp[p].dev == d) cand.push_back(static_cast<int>(p));
            continue;
        }
        if (su == 1 && rt.phase0_only[static_cast<std::size_t>(u)][p]) continue;
        const int sv = su | rt.to_phase1[static_cast<std::size_t>(u)][p];
        const int v = pp[p].dev - N;
        if (dist[static_cast<std::size_t>(v * 2 + sv)] == du - 1)
            cand.push_back(static_cast<int>(p));
    }
}

// Dimension order takes Y before Z: both lead to phase 1, so the distances alone allow
// either first (X before the others is the phases' doing).
void y_before_z(const Topology &t, const Routing &rt, int u, std::vector<int> &cand) {
    const auto &pp = rt.peers[static_cast<std::size_t>(t.nodes + u)];
    const RouterSpec &ru = t.routers[static_cast<std::size_t>(u)];
    auto moves = [&](int p, bool z) {
        const PortPeer &q = pp[static_cast<std::size_t>(p)];
        if (t.is_node(q.dev)) return false;
        const RouterSpec &rv = t.routers[static_cast<std::size_t>(q.dev - t.nodes)];
        return rv.x == ru.x && (z ? rv.y == ru.y && rv.z != ru.z : rv.y != ru.y);
    };
    if (std::any_of(cand.begin(), cand.end(), [&](int p) { return moves(p, false); }))
        cand.erase(std::remove_if(cand.begin(), cand.end(), [&](int p) { return moves(p, true); }),
                   cand.end());
}

// Next hops toward node d: any output that lowers the distance by one; ties spread by
// destination and router.
void fill_next_hops(const Topology &t, Routing &rt, int d, const std::vector<int> &dist,
                    int lowest) {
    const int R = static_cast<int>(t.routers.size());
    std::vector<int> cand;
    for (int u = 0; u < R; ++u) {
        for (int su = 0; su < 2; ++su) {
            if (dist[static_cast<std::size_t>(u * 2 + su)] == kInf) continue;
            downhill_ports(t, rt, d, u, su, dist, cand);
            if (t.routing == "xy") y_before_z(t, rt, u, cand);
            if (cand.empty()) continue;
            const int level = lowest < 0 ? -1 : t.routers[static_cast<std::size_t>(u)].level;
            const int port =
                cand.size() == 1 ? cand[0] : cand[tie_break(level, u, d, cand.size(), lowest)];
            rt.table[table_slot(t.nodes, u, su, d)] = static_cast<std::uint16_t>(port);
        }
    }
}

// Every hop the tables take lowers the distance by one, so the routers crossed from a source
// are its first router's distance (what walking the tables finds, at a fraction of the cost
// on large fabrics). A source's own router counts too: self traffic turns round there.
void hops_from_distances(const Topology &t, Routing &rt, int d, const std::vector<int> &dist) {
    for (int r = 0; r < static_cast<int>(t.routers.size()); ++r) {
        const int du = dist[static_cast<std::size_t>(r * 2)];
        if (du <= kMaxHops) set_hops(rt, r, d, du);
    }
}

// updown, xy and shortest: minimal tables under the rule's phase restriction.
void fill_minimal_tables(const Topology &t, Routing &rt) {
    std::vector<int> dist(t.routers.size() * 2);
    std::deque<int> q;
    int lowest = -1;  // the leaves' level for d-mod-k ties
    if (t.ties == "dmodk")
        for (const RouterSpec &r : t.routers) lowest = std::max(lowest, r.level);
    for (int d = 0; d < t.nodes; ++d) {
        distances_to(t, rt, d, dist, q);
        fill_next_hops(t, rt, d, dist, lowest);
        hops_from_distances(t, rt, d, dist);
    }
}

// Routers crossed from router `from` (entered in phase 0, as from a node) to node d following
// the tables, or -1 when they run into a loop, a dead end or another node.
int walk_tables(const Topology &t, const Routing &rt, int from, int d) {
    const int N = t.nodes;
    int r = from, phase = 0;
    for (int hops = 1; hops <= kMaxHops; ++hops) {
        const std::uint16_t p = rt.port(r, phase, d);
        if (p == Routing::kNone) return -1;
        const PortPeer &nx = rt.peers[static_cast<std::size_t>(N + r)][static_cast<std::size_t>(p)];
        if (t.is_node(nx.dev)) return nx.dev == d ? hops : -1;
        phase |= rt.to_phase1[static_cast<std::size_t>(r)][p];
        r = nx.dev - N;
    }
    return -1;
}

// Hop counts for explicit tables, found by walking them from each router a node is attached
// to; catches loops and dead ends.
void hops_by_walking(const Topology &t, Routing &rt) {
    std::vector<char> attached(t.routers.size(), 0);
    for (int s = 0; s < t.nodes; ++s)
        for (const PortPeer &first : rt.peers[static_cast<std::size_t>(s)])
            if (!t.is_node(first.dev)) attached[static_cast<std::size_t>(first.dev - t.nodes)] = 1;
    for (int r = 0; r < static_cast<int>(t.routers.size()); ++r)
        for (int d = 0; attached[static_cast<std::size_t>(r)] && d < t.nodes; ++d) {
            const int hops = walk_tables(t, rt, r, d);
            if (hops >= 0) set_hops(rt, r, d, hops);
        }
}

// Dimension order needs every router placed; without coordinates every hop would count as
// the same dimension and the rule would quietly become shortest-path routing. The dateline
// lane rule tells dimensions apart the same way.
void check_coordinates(const Topology &t, const std::string &what) {
    for (const RouterSpec &r : t.routers)
        if (!r.placed)
            throw TopologyError(
                at_line(t, r.line) + what + " needs coordinates for every " +
                "router, and router '" + r.name + "' has none" +
                (r.line > 0 ? " (give it 'at X Y')" : " (it suits mesh and torus)"));
}

// Valiant routing and the group lane rule need every router's group (the dragonfly's).
void check_groups(const Topology &t, const std::string &what) {
    for (const RouterSpec &r : t.routers)
        if (r.group < 0)
            throw TopologyError(at_line(t, r.line) + what + " needs a group for every router, " +
                                "and router '" + r.name + "' has none" +
                                (r.line > 0 ? " (give it 'group G')" : " (it suits dragonfly)"));
}

void check_rules(const Topology &t) {
    if (t.routing == "xy") check_coordinates(t, "routing 'xy'");
    if (t.routing == "minimal" || t.routing == "valiant")
        check_groups(t, "routing '" + t.routing + "'");
    if (t.vl_rule == "dateline")
        check_coordinates(t, "virtual-lane rule 'dateline'");
    else if (t.vl_rule == "group")
        check_groups(t, "virtual-lane rule 'group'");
    else if (t.vl_rule != "none" && t.vl_rule != "spread")
        throw TopologyError("unknown virtual-lane rule '" + t.vl_rule +
                            "' (none, dateline, group or spread)");
}

std::uint32_t mix(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

}  // namespace

// Among equal next hops at router u toward node d: by a hash of both, or with ties 'dmodk'
// on routers with levels by a digit of d in base (the number of choices): d-mod-k for the fat
// tree generator's labels, where a leaf's up link picks digit n-2 of the router above and an
// upper router's at level l picks digit l-1 of the next. The leaf takes digit 0 of d (its
// port at its own leaf), level l digit l+1 (digit l of its leaf's number): every link up and
// down then carries traffic for as many destinations as any other under uniform traffic.
// lowest: the leaves' level with ties 'dmodk', -1 with the hash.
std::size_t tie_break(int level, int u, int d, std::size_t choices, int lowest) {
    if (lowest >= 0 && level >= 0) {
        std::uint64_t q = static_cast<std::uint64_t>(d);
        for (int i = 0; level < lowest && i <= level && q > 0; ++i) q /= choices;
        return static_cast<std::size_t>(q % choices);
    }
    const std::uint32_t h =
        mix(static_cast<std::uint32_t>(d) * 2654435761U + static_cast<std::uint32_t>(u));
    return h % choices;
}

std::string unreachable_pair(const Topology &t, const Routing &rt, int src, int dst,
                             bool needs_return) {
    bool there = false;
    for (int f = 0; f < t.fabrics; ++f) {
        const bool fwd = rt.hop_count(f, src, dst) != Routing::kUnreachable;
        there |= fwd;
        if (fwd && (!needs_return || rt.hop_count(f, dst, src) != Routing::kUnreachable)) return {};
    }
    const std::string s = "n" + std::to_string(src), d = "n" + std::to_string(dst);
    const std::string rule = " (" + t.name + ", routing '" + t.routing + "')";
    if (!there)
        return "node " + d + " is unreachable from node " + s + rule + ", and the workload sends " +
               "from " + s + " to " + d;
    return "node " + s + " is unreachable from node " + d + " on the fabric" +
           (t.fabrics > 1 ? "s" : "") + " that lead" + (t.fabrics > 1 ? "" : "s") + " from " + s +
           " to " + d + rule + ", and the responses to " + s + "'s requests need that path " +
           "(--acks separate or none keeps write acknowledgements off it)";
}

Routing compute_routing(const Topology &t) {
    if (t.nodes < 1) throw TopologyError(at_line(t, t.nodes_line) + "a topology needs nodes");
    if (t.fabrics < 1 || t.fabrics > 2)
        throw TopologyError(at_line(t, t.nodes_line) + "one or two fabrics are supported");
    Routing rt;
    rt.nodes = t.nodes;
    rt.fabrics = t.fabrics;
    rt.peers = wire(t);
    phase_classes(t, rt);
    check_rules(t);
    rt.rule = make_route_rule(t);
    if (rt.rule) return rt;
    const auto N = static_cast<std::size_t>(t.nodes);
    rt.table.assign(t.routers.size() * 2 * N, Routing::kNone);
    rt.hops.assign(t.routers.size() * N, Routing::kUnreachable);
    if (t.routing == "table") {
        fill_explicit_tables(t, rt);
        hops_by_walking(t, rt);
    } else if (t.routing == "updown" || t.routing == "xy" || t.routing == "shortest" ||
               t.routing == "minimal" || t.routing == "valiant") {
        fill_minimal_tables(t, rt);
    } else {
        throw TopologyError("unknown routing rule '" + t.routing +
                            "' (updown, xy, shortest, minimal, valiant or table)");
    }
    return rt;
}

}  // namespace sansim
