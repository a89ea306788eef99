// Wiring checks and table construction (breadth-first search backwards from each destination
// over (router, phase) states; ties between equal-length next hops spread by destination).
#include "topology/routing.hpp"

#include <deque>
#include <string>

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
    for (int d = 0; d < t.devices(); ++d) peers[static_cast<std::size_t>(d)].resize(
        static_cast<std::size_t>(t.ports_of(d)));
    std::vector<std::vector<int>> used_at(peers.size());
    for (std::size_t i = 0; i < t.links.size(); ++i) {
        const LinkSpec &l = t.links[i];
        for (Endpoint e : {l.a, l.b}) {
            if (e.dev < 0 || e.dev >= t.devices())
                throw TopologyError(at_line(t, l.line) + "link to an undefined device");
            if (e.port < 0 || e.port >= t.ports_of(e.dev))
                throw TopologyError(at_line(t, l.line) + "port " + std::to_string(e.port) +
                                    " of " + t.dev_name(e.dev) + " is out of range (it has " +
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
        for (int r = 0; r < R; ++r) level[static_cast<std::size_t>(r)] =
            t.routers[static_cast<std::size_t>(r)].level;
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

std::uint32_t mix(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

}  // namespace

Routing compute_routing(const Topology &t) {
    if (t.nodes < 1) throw TopologyError(at_line(t, t.nodes_line) + "a topology needs nodes");
    if (t.fabrics < 1 || t.fabrics > 2)
        throw TopologyError(at_line(t, t.nodes_line) + "one or two fabrics are supported");
    Routing rt;
    rt.nodes = t.nodes;
    rt.fabrics = t.fabrics;
    rt.peers = wire(t);
    const int N = t.nodes;
    const int R = static_cast<int>(t.routers.size());
    const auto &peers = rt.peers;

    // Which router outputs move a packet into phase 1.
    rt.to_phase1.resize(static_cast<std::size_t>(R));
    std::vector<int> level;
    if (t.routing == "updown") level = updown_levels(t, peers);
    for (int u = 0; u < R; ++u) {
        const auto &pp = peers[static_cast<std::size_t>(N + u)];
        auto &cls = rt.to_phase1[static_cast<std::size_t>(u)];
        cls.assign(pp.size(), 1);
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
        }
    }

    rt.table.assign(static_cast<std::size_t>(R) * 2 * static_cast<std::size_t>(N), Routing::kNone);
    rt.hops.assign(static_cast<std::size_t>(t.fabrics) * static_cast<std::size_t>(N) *
                       static_cast<std::size_t>(N), Routing::kUnreachable);
    constexpr int kMaxHops = 250;
    auto set_hops = [&](int f, int s, int d, int hops) {
        rt.hops[(static_cast<std::size_t>(f) * static_cast<std::size_t>(N) +
                 static_cast<std::size_t>(s)) * static_cast<std::size_t>(N) +
                static_cast<std::size_t>(d)] = static_cast<std::uint8_t>(hops);
    };
    bool walk_tables = true;
    if (t.routing == "table") {
        for (const RouteSpec &r : t.routes) {
            if (r.router < 0 || r.router >= R || r.dst < 0 || r.dst >= N)
                throw TopologyError(at_line(t, r.line) + "route names an undefined router or node");
            if (r.port < 0 || r.port >= t.routers[static_cast<std::size_t>(r.router)].ports ||
                peers[static_cast<std::size_t>(N + r.router)][static_cast<std::size_t>(r.port)]
                        .link < 0)
                throw TopologyError(at_line(t, r.line) + "route uses port " +
                                    std::to_string(r.port) + " of " +
                                    t.routers[static_cast<std::size_t>(r.router)].name +
                                    ", which is not connected");
            for (int ph = 0; ph < 2; ++ph)
                rt.table[(static_cast<std::size_t>(r.router) * 2 + static_cast<std::size_t>(ph)) *
                             static_cast<std::size_t>(N) + static_cast<std::size_t>(r.dst)] =
                    static_cast<std::uint16_t>(r.port);
        }
    } else if (t.routing == "updown" || t.routing == "xy" || t.routing == "shortest") {
        constexpr int kInf = 1 << 30;
        std::vector<int> dist(static_cast<std::size_t>(R) * 2);
        std::deque<int> q;
        for (int d = 0; d < N; ++d) {
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
                    const int cls = rt.to_phase1[static_cast<std::size_t>(u)]
                                                [static_cast<std::size_t>(p.port)];
                    // u --(cls)--> v: class 0 keeps phase 0, class 1 leads to phase 1.
                    if (cls != sv) continue;
                    for (int su = 0; su <= cls; ++su) {
                        int &du = dist[static_cast<std::size_t>(u * 2 + su)];
                        if (du != kInf) continue;
                        du = dist[static_cast<std::size_t>(s)] + 1;
                        q.push_back(u * 2 + su);
                    }
                }
            }
            // Next hops: any output that lowers the distance by one; spread ties.
            std::vector<int> cand;
            for (int u = 0; u < R; ++u) {
                const auto &pp = peers[static_cast<std::size_t>(N + u)];
                for (int su = 0; su < 2; ++su) {
                    const int du = dist[static_cast<std::size_t>(u * 2 + su)];
                    if (du == kInf) continue;
                    cand.clear();
                    for (std::size_t p = 0; p < pp.size(); ++p) {
                        if (pp[p].link < 0) continue;
                        if (t.is_node(pp[p].dev)) {
                            if (pp[p].dev == d) cand.push_back(static_cast<int>(p));
                            continue;
                        }
                        const int cls = rt.to_phase1[static_cast<std::size_t>(u)][p];
                        if (su == 1 && cls == 0) continue;
                        const int sv = cls;
                        const int v = pp[p].dev - N;
                        if (dist[static_cast<std::size_t>(v * 2 + sv)] == du - 1)
                            cand.push_back(static_cast<int>(p));
                    }
                    if (cand.empty()) continue;
                    const std::uint32_t h =
                        mix(static_cast<std::uint32_t>(d) * 2654435761U + static_cast<std::uint32_t>(u));
                    const int port = cand.size() == 1 ? cand[0] : cand[h % cand.size()];
                    rt.table[(static_cast<std::size_t>(u) * 2 + static_cast<std::size_t>(su)) *
                                 static_cast<std::size_t>(N) + static_cast<std::size_t>(d)] =
                        static_cast<std::uint16_t>(port);
                }
            }
            // Every hop the tables take lowers the distance by one, so the routers crossed
            // from a source are its first router's distance (what walking the tables finds,
            // at a fraction of the cost on large fabrics).
            for (int f = 0; f < t.fabrics; ++f)
                for (int s = 0; s < N; ++s) {
                    if (s == d) continue;
                    const PortPeer &first =
                        peers[static_cast<std::size_t>(s)][static_cast<std::size_t>(f)];
                    if (t.is_node(first.dev)) {
                        if (first.dev == d) set_hops(f, s, d, 0);
                        continue;
                    }
                    const int du = dist[static_cast<std::size_t>((first.dev - N) * 2)];
                    if (du <= kMaxHops) set_hops(f, s, d, du);
                }
        }
        walk_tables = false;
    } else {
        throw TopologyError("unknown routing rule '" + t.routing +
                            "' (updown, xy, shortest or table)");
    }

    // Hop counts per fabric for explicit tables, found by walking them; catches loops and
    // dead ends.
    for (int f = 0; f < t.fabrics && walk_tables; ++f) {
        for (int s = 0; s < N; ++s) {
            const PortPeer &first = peers[static_cast<std::size_t>(s)][static_cast<std::size_t>(f)];
            for (int d = 0; d < N; ++d) {
                if (d == s) continue;
                int hops = 0;
                if (t.is_node(first.dev)) {
                    if (first.dev != d) continue;
                } else {
                    int r = first.dev - N, phase = 0;
                    bool ok = false;
                    while (hops < kMaxHops) {
                        ++hops;
                        const std::uint16_t p = rt.port(r, phase, d);
                        if (p == Routing::kNone) break;
                        const PortPeer &nx =
                            peers[static_cast<std::size_t>(N + r)][static_cast<std::size_t>(p)];
                        if (t.is_node(nx.dev)) {
                            ok = nx.dev == d;
                            break;
                        }
                        phase |= rt.to_phase1[static_cast<std::size_t>(r)][p];
                        r = nx.dev - N;
                    }
                    if (!ok) continue;
                }
                set_hops(f, s, d, hops);
            }
        }
    }
    for (int s = 0; s < N; ++s)
        for (int d = 0; d < N; ++d) {
            if (s == d) continue;
            bool any = false;
            for (int f = 0; f < t.fabrics; ++f) any |= rt.hop_count(f, s, d) != Routing::kUnreachable;
            if (!any)
                throw TopologyError(at_line(t, t.nodes_line) + "node n" + std::to_string(d) +
                                    " is unreachable from node n" + std::to_string(s) +
                                    " (routing '" + t.routing + "')");
        }
    return rt;
}

}  // namespace sansim
