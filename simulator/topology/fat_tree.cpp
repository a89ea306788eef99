// k-ary n-tree: k^n nodes, n levels of k^(n-1) routers with 2k ports (down 0..k-1, up
// k..2k-1). Router <w,l> joins <w',l+1> when w and w' differ at most in digit l.
#include "topology/topology.hpp"

namespace sansim {

Topology make_fat_tree(int k, int n, int fabrics) {
    if (k < 2 || n < 1 || n > 8) throw TopologyError("fattree: needs k >= 2 and 1 <= n <= 8");
    int per_level = 1;
    for (int i = 0; i + 1 < n; ++i) per_level *= k;
    if (static_cast<long>(per_level) * k > 65536) throw TopologyError("fattree: too many nodes");
    Topology t;
    t.name = "fattree:" + std::to_string(k) + "," + std::to_string(n);
    t.nodes = per_level * k;
    t.fabrics = fabrics;
    auto digit = [k](int w, int i) {
        for (int j = 0; j < i; ++j) w /= k;
        return w % k;
    };
    auto with_digit = [k, &digit](int w, int i, int v) {
        int p = 1;
        for (int j = 0; j < i; ++j) p *= k;
        return w + (v - digit(w, i)) * p;
    };
    for (int f = 0; f < fabrics; ++f) {
        const int base = static_cast<int>(t.routers.size());
        for (int l = 0; l < n; ++l)
            for (int w = 0; w < per_level; ++w) {
                const int r = t.add_router(2 * k, f);
                t.routers[static_cast<std::size_t>(r)].level = l;
            }
        auto id = [&](int l, int w) { return t.router_dev(base + l * per_level + w); };
        for (int node = 0; node < t.nodes; ++node) t.connect(node, f, id(n - 1, node / k), node % k);
        for (int l = 0; l + 1 < n; ++l)
            for (int w = 0; w < per_level; ++w)
                for (int v = 0; v < k; ++v) {
                    const int lower = with_digit(w, l, v);
                    // upper <w,l> down-port v  <->  lower <lower,l+1> up-port k + digit l of w
                    t.connect(id(l, w), v, id(l + 1, lower), k + digit(w, l));
                }
    }
    return t;
}

}  // namespace sansim
