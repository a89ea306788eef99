// The job's phases, one file each, each with both halves: the node's (a handler of the
// monitor's order on the sorting thread, or of its questions on the shadow thread) and the
// monitor's step that asks every node and takes the answers. node/node.cpp dispatches the
// orders through its command table; monitor/monitor.cpp runs the steps in order.
#pragma once

#include <rio/rio.h>

#include "sortapp/status.hpp"

namespace sortapp::cluster {

struct Node;
struct Order;
class Monitor;

// Check (phases/check.cpp): every node checks its input, its output and scratch directories
// and measures its scratch disk before anyone does any work.
void node_check(Node &n, const Order &o);
Status monitor_check(Monitor &m);

// Phases 1 and 2 (phases/local.cpp): the local sort into the work file, on every node at once.
void node_local(Node &n, const Order &o);
Status monitor_local(Monitor &m);

// Phase 3a (phases/select.cpp): exact selection; nodes answer on their shadow threads.
void serve_select(rio_t *rio, rio_incoming_t *in, void *node);
Status monitor_select(Monitor &m);

// Phase 3b (phases/merge.cpp): the network probe for the expectations, then every node pulls
// its partition from every node and merges it.
void serve_probe(rio_t *rio, rio_incoming_t *in, void *node);
void node_net_probe(Node &n, const Order &o);
void node_merge(Node &n, const Order &o);
Status monitor_merge(Monitor &m);

// The river algorithm (phases/river.cpp): sampling for the splitters, then the river sort.
void node_river_sample(Node &n, const Order &o);
void node_river_sort(Node &n, const Order &o);
Status monitor_sample(Monitor &m);
Status monitor_river(Monitor &m);
// The median of the nodes' network probe rates, MB/s (phases/merge.cpp), for the expectations.
Status measure_network(Monitor &m, double &mb_s);

// Commit (phases/commit.cpp): every node renames its merged output into place.
void node_commit(Node &n, const Order &o);
Status monitor_commit(Monitor &m);

// Counters (phases/counters.cpp): the node samples its counters from start to end and serves
// them on its shadow thread (kCmdProgress, kCmdCounters); the monitor asks every node once for
// them (ask_counters; `complete` when every node sent all it had), and at the end until it has
// them all (monitor_collect).
void start_sampling(Node &n);
void stop_sampling(Node &n);
void serve_counters(rio_t *rio, rio_incoming_t *in, void *node);
Status ask_counters(Monitor &m, const char *step, bool &complete);
Status monitor_collect(Monitor &m);

// The final word (phases/finish.cpp): every node keeps its output, or removes everything.
void node_done(Node &n, const Order &o);
Status monitor_finish(Monitor &m);

}  // namespace sortapp::cluster
