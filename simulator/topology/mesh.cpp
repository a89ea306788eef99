// Meshes and tori of one to three dimensions (dimension-order routing; tori default to
// up*/down*, deadlock free without virtual lanes). Ports: 0..per-1 nodes, then for each
// dimension its + and - links (+x, -x, +y, -y, +z, -z). A torus ring's wrap-around link is its
// dateline (for dimension order on a torus with the dateline lane rule).
#include "topology/topology.hpp"

namespace sansim {

namespace {

// Router r's coordinate in dimension k (x fastest, as the routers are numbered).
int coordinate(const std::vector<int> &dims, int r, std::size_t k) {
    for (std::size_t i = 0; i < k; ++i) r /= dims[i];
    return r % dims[k];
}

std::string mesh_name(const std::vector<int> &dims, int per, bool torus) {
    std::string s = torus ? "torus:" : "mesh:";
    for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? "," : "") + std::to_string(dims[k]);
    return per > 1 ? s + "/" + std::to_string(per) : s;
}

void place_routers(Topology &t, const std::vector<int> &dims, int per, int fabric, int count) {
    for (int i = 0; i < count; ++i) {
        RouterSpec &r = t.routers[static_cast<std::size_t>(
            t.add_router(per + 2 * static_cast<int>(dims.size()), fabric))];
        int *at[3] = {&r.x, &r.y, &r.z};
        for (std::size_t k = 0; k < dims.size(); ++k) *at[k] = coordinate(dims, i, k);
        r.placed = true;
    }
}

}  // namespace

Topology make_mesh(const std::vector<int> &dims, int per, bool torus, int fabrics) {
    long routers = 1;
    for (int d : dims) routers *= d < 1 ? 0 : d;
    if (dims.empty() || dims.size() > 3 || routers < 2 || routers > (1L << 30) || per < 1)
        throw TopologyError("mesh/torus: needs 1 to 3 dimensions, >= 2 routers and >= 1 node each");
    const int count = static_cast<int>(routers);
    Topology t;
    t.name = mesh_name(dims, per, torus);
    t.nodes = count * per;
    t.fabrics = fabrics;
    t.routing = torus ? "updown" : "xy";
    t.generator = torus ? "torus" : "mesh";
    t.generator_args = {per};
    t.generator_args.insert(t.generator_args.end(), dims.begin(), dims.end());
    for (int f = 0; f < fabrics; ++f) {
        const int base = static_cast<int>(t.routers.size());
        place_routers(t, dims, per, f, count);
        for (int n = 0; n < t.nodes; ++n) t.connect(n, f, t.router_dev(base + n / per), n % per);
        for (int r = 0; r < count; ++r) {
            int stride = 1;
            for (std::size_t k = 0; k < dims.size(); ++k) {
                const int size = dims[k], c = coordinate(dims, r, k);
                const int port = per + 2 * static_cast<int>(k);
                if (c + 1 < size || (torus && size > 2)) {
                    const int next = r + (c + 1 < size ? stride : -c * stride);
                    t.connect(t.router_dev(base + r), port, t.router_dev(base + next), port + 1);
                    t.links.back().dateline = c + 1 == size;
                }
                stride *= size;
            }
        }
    }
    return t;
}

}  // namespace sansim
