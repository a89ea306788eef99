// One simulation run: build the network, start the workload, run, collect. Shared by the
// sansim command and the tests.
#pragma once
#include "model/params.hpp"
#include "report/results.hpp"
#include "topology/topology.hpp"
#include "traffic/workload.hpp"

namespace sansim {

// The measurement window: statistics count only what is injected after warmup_us and before
// warmup_us + measure_us (deliveries: made inside it). After the window the run goes on, the
// sources still injecting, until the window's transfers are done or drain_us has passed.
struct Measurement {
    double warmup_us = 0;
    double measure_us = 0;  // 0: to the end of the run
    double drain_us = -1;   // <0: as long as the window
    bool given() const { return warmup_us > 0 || measure_us > 0; }
};

// time_limit 0: run until the workload finishes, or with a measurement window until it is
// drained (open-loop workloads need one or the other).
Results run_simulation(const Topology &topo, const Params &params, const WorkloadOptions &work,
                       Time time_limit, const Measurement &measure = {});

}  // namespace sansim
