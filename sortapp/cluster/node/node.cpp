// A sort process: the sorting thread (this one) takes the monitor's orders — check, phases 1
// and 2, the network probe, phase 3b, commit, the final word — through a command table, each
// handled by its phase (phases/*.cpp), while libremoteio's shadow thread serves every other
// node's remote reads of this node's work file, the monitor's phase 3a questions, its
// progress and counters questions and its abort, and the sampler samples its counters. An abort
// from the monitor, the monitor's death or silence, or a signal removes everything the node
// created.
#include "node.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>

#include "node/state.hpp"
#include "node/test_needle.hpp"
#include "paths.hpp"
#include "phases/phases.hpp"

namespace sortapp::cluster {

namespace {

// The monitor's orders to the sorting thread, by command.
struct OrderEntry {
    uint32_t command;
    OrderHandler handle;
};
constexpr OrderEntry kOrders[] = {
    {kCmdCheck, node_check},
    {kCmdLocal, node_local},
    {kCmdNetProbe, node_net_probe},
    {kCmdMerge, node_merge},
    {kCmdCommit, node_commit},
    {kCmdDone, node_done},
    {kCmdRiverSample, node_river_sample},
    {kCmdRiverSort, node_river_sort},
};

OrderHandler find_order(uint32_t command) {
    for (const OrderEntry &e : kOrders)
        if (e.command == command) return e.handle;
    return nullptr;
}

// The monitor gave up on the job: everything this node created goes, and so does the node,
// whatever its sorting thread is doing.
void on_abort(rio_t *rio, rio_incoming_t *in, void *) {
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    std::string why(static_cast<const char *>(info.data), std::min<size_t>(info.len, 4096));
    rio_reply(rio, in, RIO_OK, nullptr, 0);
    cleanup::abort_process(1, "sortapp: " + whereabouts() + ": the job was aborted (" + why +
                                  "); removed what this node created");
}

void serve_questions(Node &n) {
    n.probe_bytes = sortapp::Buffer(16u << 20);
    rio_set_handler(n.rio, kCmdSamples, serve_select, &n);
    rio_set_handler(n.rio, kCmdCounts, serve_select, &n);
    rio_set_handler(n.rio, kCmdProbe, serve_probe, &n);
    rio_set_handler(n.rio, kCmdProgress, serve_counters, &n);
    rio_set_handler(n.rio, kCmdCounters, serve_counters, &n);
    rio_set_handler(n.rio, kCmdAbort, on_abort, &n);
    rio_set_handler(n.rio, kCmdPing, answer_ping, nullptr);
}

// Takes the monitor's orders until its final word (or until the queue fails).
void take_orders(Node &n, msg_cq_t *cq) {
    while (!n.exit_code) {
        msg_completion_t c;
        int rc = msg_cq_wait(cq, -1, &c);
        if (rc != MSG_OK) {
            std::fprintf(stderr, "sortapp: %s: waiting for orders: %s\n", whereabouts().c_str(),
                         msg_strerror(rc));
            return;
        }
        if (c.op != RIO_OP_REQUEST) continue;
        Order o;
        o.in = static_cast<rio_incoming_t *>(c.cookie);
        rio_incoming_info(o.in, &o.info);
        if (o.info.source != n.monitor) {
            reply_error(n.rio, o.in, "only the monitor gives orders");
        } else if (OrderHandler handle = find_order(o.info.command)) {
            handle(n, o);
        } else {
            reply_error(n.rio, o.in, "unknown command");
        }
    }
}

}  // namespace

int node_main(const JobOptions &opts, msg_context_t *msg, int rank, int monitor) {
    Node n(opts, msg, rank, monitor);
    n.job_id = opts.job_id;
    if (n.job_id.empty()) n.job_id = std::string("p").append(std::to_string(getpid()));
    set_whereabouts("node " + std::to_string(rank), "waiting for the monitor");
    n.input = expand(opts.input, rank);
    n.output = expand(opts.output, rank);
    n.scratch = opts.scratch.empty() ? split_path(n.output).dir : expand(opts.scratch, rank);
    start_sampling(n);
    const TestNeedle test_needle(rank, n.scratch);
    msg_cq_t *cq = nullptr;
    if (msg_cq_create(msg, &cq) != MSG_OK) return 1;
    if (rio_init(msg, cq, nullptr, &n.rio) != RIO_OK) {
        std::fprintf(stderr, "sortapp: node %d: cannot start its shadow thread\n", rank);
        return 1;
    }
    serve_questions(n);
    {
        // From here on a monitor that dies or stops answering ends this node.
        Watch monitor_watch(n.rio, msg, monitor, opts.stall_ms, "the monitor");
        take_orders(n, cq);
    }
    stop_sampling(n);
    int exit_code = n.exit_code.value_or(1);
    if (exit_code != 0) cleanup::remove_all();
    int rc = rio_finalize(n.rio);
    if (rc != RIO_OK && exit_code == 0) exit_code = 1;
    {
        std::lock_guard<std::mutex> lk(n.source_mu);
        n.source.reset();
    }
    rio_destroy(n.rio);
    msg_cq_destroy(cq);
    return exit_code;
}

}  // namespace sortapp::cluster
