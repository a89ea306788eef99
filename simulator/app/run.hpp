// One simulation run: build the network, start the workload, run, collect. Shared by the
// sansim command and the tests.
#pragma once
#include "model/params.hpp"
#include "report/results.hpp"
#include "topology/topology.hpp"
#include "traffic/workload.hpp"

namespace sansim {

// time_limit 0: run until the workload finishes (open-loop workloads then need a limit).
Results run_simulation(const Topology &topo, const Params &params, const WorkloadOptions &work,
                       Time time_limit);

}  // namespace sansim
