// Phase 3b: first the network figure for the expectations (every node pulls a fixed volume
// from the next node's shadow thread, timed; or --network-mb-s), then every node pulls its
// partition's range of every node's work file and merges it (remote_merge.hpp) into its
// output, under a temporary name until the commit.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "monitor/state.hpp"
#include "node/state.hpp"
#include "phases/phases.hpp"
#include "remote_merge.hpp"
#include "sortapp/report.hpp"

namespace sortapp::cluster {

namespace {}  // namespace

// The median of the nodes' probe rates, MB/s; 0 when none measured anything.
Status measure_network(Monitor &m, double &mb_s) {
    auto answers = m.ask_all(kCmdNetProbe, RIO_TARGET_WORKER, nullptr, 4096);
    SORTAPP_TRY(m.failure(answers, "network probe"));
    std::vector<double> rates;
    for (auto &a : answers) {
        PhaseFigures f;
        if (decode(a.data.data(), a.data.size(), f) && f.seconds > 0)
            rates.push_back(f.bytes_received / f.seconds / 1e6);
    }
    if (!rates.empty()) {
        std::sort(rates.begin(), rates.end());
        mb_s = rates[rates.size() / 2];
    }
    return Status::ok();
}

namespace {

// Partition j: its range of every node's work file.
MergeOrder merge_order(const JobFigures &job, int nodes, int j) {
    MergeOrder order;
    order.network_mb_s = job.network_mb_s;
    for (int i = 0; i < nodes; ++i) {
        order.handles.push_back(job.local[static_cast<size_t>(i)].handle);
        order.first.push_back(job.starts[j][i]);
        order.last.push_back(job.starts[j + 1][i]);
    }
    return order;
}

}  // namespace

// The network probe's far end: a reply of the asked size.
void serve_probe(rio_t *rio, rio_incoming_t *in, void *arg) {
    auto *node = static_cast<Node *>(arg);
    rio_request_info_t info;
    rio_incoming_info(in, &info);
    uint64_t want = 0;
    if (info.len == sizeof want) std::memcpy(&want, info.data, sizeof want);
    if (want > node->probe_bytes.size()) want = node->probe_bytes.size();
    rio_reply(rio, in, RIO_OK, node->probe_bytes.data(), want);
}

// Pulls from the next node's shadow thread for a fixed volume.
void node_net_probe(Node &n, const Order &o) {
    n.set_progress("network probe", 0, 0);
    int dest = (n.rank + 1) % n.monitor;  // nodes are ranks 0..monitor-1
    const uint64_t piece = 4u << 20;
    const int pieces = 8;
    std::vector<char> buf(piece);
    double t0 = now_seconds();
    Status s;
    for (int i = 0; i < pieces && s; ++i) {
        size_t got = 0;
        int rc = rio_call(n.rio, dest, RIO_TARGET_SHADOW, kCmdProbe, &piece, sizeof piece,
                          buf.data(), buf.size(), &got);
        if (rc != RIO_OK || got != piece)
            s = Status::error(std::string("network probe: ") + rio_strerror(rc));
    }
    double mbps = static_cast<double>(piece) * pieces / (now_seconds() - t0) / 1e6;
    if (!s) {
        reply_error(n.rio, o.in, s.message());
        return;
    }
    PhaseFigures f;
    f.phase = "network probe";
    f.bytes_received = piece * pieces;
    f.seconds = mbps > 0 ? piece * pieces / (mbps * 1e6) : 0;
    reply(n.rio, o.in, f);
}

void node_merge(Node &n, const Order &o) {
    MergeOrder order;
    if (!decode(o.info.data, o.info.len, order) ||
        order.handles.size() != static_cast<size_t>(n.monitor)) {
        reply_error(n.rio, o.in, "malformed merge order");
        return;
    }
    n.set_progress("phase 3b", 0, 0);
    Stopwatch start = Stopwatch::now();
    RemoteMergeResult res;
    MergeSettings ms;
    ms.output = n.output;
    ms.temp_tag = n.job_id;
    ms.block = static_cast<size_t>(n.params.block_bytes);
    ms.depth = n.params.read_depth;
    ms.stall_ms = n.opts.stall_ms;
    Status s = remote_merge(
        n.rio, n.msg, n.rank, n.format, order, ms, res,
        [&n](uint64_t done, uint64_t total) { n.set_progress("phase 3b", done, total); });
    n.set_progress("merged", 0, 0);
    Stopwatch end = Stopwatch::now();
    if (!s) {
        reply_error(n.rio, o.in, s.message());
        return;
    }
    n.pending_output = res.pending_output;
    PhaseFigures f;
    f.phase = "phase 3b";
    f.seconds = end.wall - start.wall;
    f.cpu_seconds = end.cpu - start.cpu;
    f.bytes_received = res.bytes_received;
    f.bytes_read = res.bytes_local;
    f.bytes_written = res.records * n.format.record_size;
    reply(n.rio, o.in, f);
}

Status monitor_merge(Monitor &m) {
    if (m.opts().network_mb_s > 0) {
        m.job.network_mb_s = m.opts().network_mb_s;
    } else if (m.nodes() > 1) {
        SORTAPP_TRY(measure_network(m, m.job.network_mb_s));
    }
    const double t = now_seconds();
    auto answers = m.ask_all(
        kCmdMerge, RIO_TARGET_WORKER,
        [&](int j) { return encode(merge_order(m.job, m.nodes(), j)); }, 4096);
    m.job.merge_s = now_seconds() - t;
    return decode_answers(m, answers, "phase 3b", m.job.merge);
}

}  // namespace sortapp::cluster
