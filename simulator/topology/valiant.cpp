// Nearest routers by breadth-first search over routers, one search per router; only routers
// with a node of their own fabric attached can be aimed at (a node is what the tables know).
#include "topology/valiant.hpp"

#include <algorithm>
#include <deque>

namespace sansim {
namespace {

// Router distances from `from` over router-to-router links.
void router_distances(const Topology &t, const Routing &rt, int from, std::vector<int> &dist) {
    std::fill(dist.begin(), dist.end(), -1);
    std::deque<int> q{from};
    dist[static_cast<std::size_t>(from)] = 0;
    while (!q.empty()) {
        const int u = q.front();
        q.pop_front();
        for (const PortPeer &p : rt.peers[static_cast<std::size_t>(t.nodes + u)]) {
            if (p.link < 0 || t.is_node(p.dev)) continue;
            const int v = p.dev - t.nodes;
            if (dist[static_cast<std::size_t>(v)] >= 0) continue;
            dist[static_cast<std::size_t>(v)] = dist[static_cast<std::size_t>(u)] + 1;
            q.push_back(v);
        }
    }
}

// The lowest-numbered node attached to each router (-1: none).
std::vector<int> attached_nodes(const Topology &t, const Routing &rt) {
    std::vector<int> node(t.routers.size(), -1);
    for (int n = t.nodes - 1; n >= 0; --n)
        for (int f = 0; f < t.fabrics; ++f) {
            const PortPeer &p = rt.peers[static_cast<std::size_t>(n)][static_cast<std::size_t>(f)];
            if (!t.is_node(p.dev)) node[static_cast<std::size_t>(p.dev - t.nodes)] = n;
        }
    return node;
}

}  // namespace

Intermediates valiant_intermediates(const Topology &t, const Routing &rt) {
    Intermediates in;
    const int R = static_cast<int>(t.routers.size());
    for (const RouterSpec &r : t.routers) {
        in.router_group.push_back(r.group);
        in.groups = std::max(in.groups, r.group + 1);
    }
    const std::vector<int> node = attached_nodes(t, rt);
    std::vector<int> dist(static_cast<std::size_t>(R));
    in.first.push_back(0);
    for (int u = 0; u < R; ++u) {
        router_distances(t, rt, u, dist);
        for (int g = 0; g < in.groups; ++g) {
            int best = -1;
            for (int v = 0; v < R && g != in.router_group[static_cast<std::size_t>(u)]; ++v) {
                const auto vi = static_cast<std::size_t>(v);
                if (in.router_group[vi] != g || node[vi] < 0 || dist[vi] < 0) continue;
                if (best < 0 || dist[vi] < best) {
                    best = dist[vi];
                    while (in.nodes.size() > in.first.back()) in.nodes.pop_back();
                }
                if (dist[vi] == best) in.nodes.push_back(node[vi]);
            }
            in.first.push_back(static_cast<std::uint32_t>(in.nodes.size()));
        }
    }
    return in;
}

}  // namespace sansim
