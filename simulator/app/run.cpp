// Wall time is measured around the event loop only, so events/s is the engine's speed.
#include "app/run.hpp"

#include <chrono>
#include <limits>

namespace sansim {

Results run_simulation(const Topology &topo, const Params &params, const WorkloadOptions &work,
                       Time time_limit) {
    Network net(topo, params);
    auto wl = make_workload(work, net);
    const auto t0 = std::chrono::steady_clock::now();
    wl->start(net);
    net.run(time_limit > 0 ? time_limit : std::numeric_limits<Time>::max());
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    net.finish_statistics();
    const int nodes = work.nodes > 0 ? work.nodes : net.nodes();
    Results r = collect(net, *wl, nodes, wall);
    r.workload = work.kind;
    return r;
}

}  // namespace sansim
