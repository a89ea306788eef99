// k-ary n-tree: k^n nodes, n levels of k^(n-1) routers with 2k ports (down 0..k-1, up
// k..2k-1). Router <w,l> joins <w',l+1> when w and w' differ at most in digit l. Oversubscribed
// s:1, leaf routers keep k down links but only k/s up links (to the upper routers whose digit
// n-2 is below k/s); the levels above keep those routers only, 1/s of the full tree's.
#include <vector>

#include "topology/topology.hpp"

namespace sansim {
namespace {

struct Digits {
    int k;
    int of(int w, int i) const {
        for (int j = 0; j < i; ++j) w /= k;
        return w % k;
    }
    int with(int w, int i, int v) const {
        int p = 1;
        for (int j = 0; j < i; ++j) p *= k;
        return w + (v - of(w, i)) * p;
    }
};

void check_fat_tree(int k, int n, int oversub) {
    if (k < 2 || n < 1 || n > 8) throw TopologyError("fattree: needs k >= 2 and 1 <= n <= 8");
    if (oversub < 1 || k % oversub != 0)
        throw TopologyError("fattree: oversubscription " + std::to_string(oversub) +
                            ":1 needs k a multiple of it (k = " + std::to_string(k) + ")");
    if (oversub > 1 && n < 2) throw TopologyError("fattree: oversubscription needs n >= 2");
}

}  // namespace

Topology make_fat_tree(int k, int n, int fabrics, int oversub) {
    check_fat_tree(k, n, oversub);
    int per_level = 1;
    for (int i = 0; i + 1 < n; ++i) per_level *= k;
    if (static_cast<long>(per_level) * k > 65536) throw TopologyError("fattree: too many nodes");
    const Digits digit{k};
    const int ups = k / oversub;  // a leaf router's up links
    Topology t;
    t.name = "fattree:" + std::to_string(k) + "," + std::to_string(n) +
             (oversub > 1 ? "," + std::to_string(oversub) : "");
    t.nodes = per_level * k;
    t.fabrics = fabrics;
    t.generator = "fattree";
    t.generator_args = {k, n, oversub};
    // Upper routers whose digit n-2 is ups or more have nothing below them when oversubscribed.
    auto kept = [&](int l, int w) { return l == n - 1 || digit.of(w, n - 2) < ups; };
    for (int f = 0; f < fabrics; ++f) {
        std::vector<int> index(static_cast<std::size_t>(n * per_level), -1);
        for (int l = 0; l < n; ++l)
            for (int w = 0; w < per_level; ++w) {
                if (!kept(l, w)) continue;
                const int ports = l == n - 1 && oversub > 1 ? k + ups : 2 * k;
                const int r = t.add_router(ports, f);
                t.routers[static_cast<std::size_t>(r)].level = l;
                index[static_cast<std::size_t>(l * per_level + w)] = r;
            }
        auto id = [&](int l, int w) {
            return t.router_dev(index[static_cast<std::size_t>(l * per_level + w)]);
        };
        for (int node = 0; node < t.nodes; ++node)
            t.connect(node, f, id(n - 1, node / k), node % k);
        for (int l = 0; l + 1 < n; ++l)
            for (int w = 0; w < per_level; ++w) {
                if (!kept(l, w)) continue;
                for (int v = 0; v < k; ++v) {
                    const int lower = digit.with(w, l, v);
                    // upper <w,l> down-port v  <->  lower <lower,l+1> up-port k + digit l of w
                    t.connect(id(l, w), v, id(l + 1, lower), k + digit.of(w, l));
                }
            }
    }
    return t;
}

}  // namespace sansim
