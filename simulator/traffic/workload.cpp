// Workload selection by name.
#include "traffic/workload.hpp"

#include <stdexcept>

namespace sansim {

double series_reach_us(const Network &net) {
    return kMaxSeriesBins * net.params().series_bin_us;
}

void all_pairs(int nodes, const std::function<void(int, int)> &visit) {
    for (int s = 0; s < nodes; ++s)
        for (int d = 0; d < nodes; ++d)
            if (s != d) visit(s, d);
}

std::unique_ptr<Workload> make_workload(const WorkloadOptions &opt, Network &net) {
    if (opt.nodes > net.nodes())
        throw std::invalid_argument("workload asks for " + std::to_string(opt.nodes) +
                                    " nodes; the topology has " + std::to_string(net.nodes()));
    if (opt.rounds < 1) throw std::invalid_argument("rounds must be >= 1");
    if (opt.kind == "alltoall") return make_alltoall(opt, net);
    if (opt.kind == "permutation") return make_permutation(opt, net, false);
    if (opt.kind == "hotspot") return make_permutation(opt, net, true);
    if (opt.kind == "pingpong") return make_pingpong(opt, net);
    if (opt.kind == "phase3b") return make_phase3b(opt, net);
    if (opt.kind == "trace") return make_trace(opt, net);
    if (opt.kind == "replay") return make_replay(opt, net);
    if (opt.kind == "openloop") return make_open_loop(opt, net);
    throw std::invalid_argument(
        "unknown workload '" + opt.kind +
        "' (alltoall, permutation, hotspot, pingpong, phase3b, trace, replay, openloop)");
}

}  // namespace sansim
