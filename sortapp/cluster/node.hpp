// The two roles of a process in a distributed sort job.
#pragma once

#include <msg/msg.h>

#include "options.hpp"

namespace sortapp::cluster {

// A sort node: serves the monitor (rank `monitor`) until told to finish.
int node_main(const JobOptions &opts, msg_context_t *msg, int rank, int monitor);
// The monitor: drives the job over nodes 0..nodes-1 and prints the report.
int monitor_main(const JobOptions &opts, msg_context_t *msg, int nodes);

// The monitor's exit status when the sort succeeded, every output in place, but --timeline
// could not be written: `sortapp run` keeps the outputs for it.
constexpr int kExitTimelineFailed = 3;

}  // namespace sortapp::cluster
