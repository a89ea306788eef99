// What the monitor and the sort nodes say to each other over libremoteio:
// command codes, the job's parameters, and each message's fields in wire order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "parallel_select.hpp"
#include "wire.hpp"

namespace sortapp::cluster {

// IPC to a node's sorting thread.
constexpr uint32_t kCmdCheck = 1;        // JobParams -> NodeCheck: inputs and outputs usable?
constexpr uint32_t kCmdLocal = 2;        // u32 nodes sharing the disk -> LocalDone: phases 1 and 2
constexpr uint32_t kCmdMerge = 3;        // MergeOrder -> PhaseFigures: phase 3b
constexpr uint32_t kCmdDone = 4;         // (abort flag) -> PhaseFigures (bytes served): finish
constexpr uint32_t kCmdNetProbe = 5;     // -> PhaseFigures: pull from the next node, timed
constexpr uint32_t kCmdCommit = 6;       // -> nothing: rename the merged output into place
constexpr uint32_t kCmdRiverSample = 7;  // SampleOrder -> RiverSamples: random input keys
constexpr uint32_t kCmdRiverSort = 8;    // RiverOrder -> RiverDone: the river sort, all of it
// Served by a node's shadow thread, during phase 3a.
constexpr uint32_t kCmdSamples = 10;  // SampleRequest -> SampleReply
constexpr uint32_t kCmdCounts = 11;   // CountRequest -> CountReply
constexpr uint32_t kCmdProbe = 12;    // u64 n -> n bytes (the network probe's far end)
// The liveness question, asked while an order is outstanding: u64 the first sample the monitor
// lacks -> CountersAnswer (progress, and the node's samples from there on).
constexpr uint32_t kCmdProgress = 13;
constexpr uint32_t kCmdAbort = 14;  // text (why) -> nothing: remove what the job created, exit
// Served by the monitor's shadow thread (and answered by anyone): are you there?
constexpr uint32_t kCmdPing = 15;
// As kCmdProgress, asked at the check (for the clock) and at the end (until every sample came).
constexpr uint32_t kCmdCounters = 16;

// Reply status of a node that could not do what was asked; the reply data is the message.
constexpr int kNodeError = 1;

// What a node accepts in JobParams (sortapp's options hold the monitor to the same):
// phase 3b keeps read_depth blocks per source node in memory.
constexpr uint64_t kMaxBlockBytes = 64u << 20;
constexpr uint32_t kMinReadDepth = 2;
constexpr uint32_t kMaxReadDepth = 64;

struct JobParams {
    uint64_t record_size = 100;
    uint64_t key_size = 10;
    uint64_t memory_budget = 0;  // per node; 0: the node's own default
    uint64_t block_bytes = 512 * 1024;
    uint32_t read_depth = 4;  // per source stream in phase 3b
    uint32_t algorithm = 0;   // kThreePhase or kRiver
    uint32_t passes = 0;      // river: 0 as memory allows, 1 or 2 forced
    uint32_t remeasure = 0;   // 1: measure the scratch disk, never the cached figure
};

constexpr uint32_t kThreePhase = 0;
constexpr uint32_t kRiver = 1;

struct PhaseFigures {
    std::string phase;
    double seconds = 0, cpu_seconds = 0, expected_seconds = 0;
    uint64_t bytes_read = 0, bytes_written = 0, bytes_sent = 0, bytes_received = 0;
    std::string resource;  // what should bound it: "disk", "network", "cpu"
};

struct NodeCheck {
    uint64_t records = 0;
    double disk_read_mb_s = 0, disk_write_mb_s = 0;  // measured or cached
    double disk_mixed_mb_s = 0;                      // reading and writing at once
    std::string disk;  // host and device of the scratch disk: nodes sharing one split it
    // Bytes free on the scratch disk and the output's, as statvfs says; kUnknownFree where the
    // node cannot tell (then that disk is not checked).
    static constexpr uint64_t kUnknownFree = ~uint64_t(0);
    uint64_t scratch_free = kUnknownFree;
    std::string output_disk;  // host and device of the output's directory
    uint64_t output_free = kUnknownFree;
};

// A node's answer to kCmdProgress and kCmdCounters. Its counter samples (viaduct::CounterSample,
// whose fields are all fixed-size) travel as they are in memory, kSampleBytes each, numbered
// from the node's first: `first` numbers the first one here, later than asked when the node's
// ring had dropped the ones between.
constexpr size_t kSampleBytes = 184;
constexpr size_t kMaxSamplesPerAnswer = 512;
constexpr size_t kMaxPhaseNames = 64;
constexpr size_t kMaxPhaseNameBytes = 64;
// A reply buffer that holds any answer decode() accepts.
constexpr size_t kCountersAnswerBytes =
    kMaxSamplesPerAnswer * kSampleBytes + kMaxPhaseNames * (8 + kMaxPhaseNameBytes) + 4096;

struct CountersAnswer {
    PhaseFigures progress;  // phase, bytes done (bytes_read) and total (bytes_written)
    uint64_t clock_us = 0;  // the node's CLOCK_REALTIME as it answered, microseconds
    // The node's phase names, in the order they first appeared: a sample's phase indexes them.
    // The table only grows, so each answer's starts with the previous one's.
    std::vector<std::string> phase_names;
    uint64_t first = 0;   // the number of the first sample here
    uint64_t end = 0;     // one past the number of the node's newest sample
    std::string samples;  // whole samples, kSampleBytes each
};

struct LocalDone {
    uint64_t records = 0;
    uint64_t handle = 0;  // the exported work file
    std::vector<PhaseFigures> phases;
};

struct MergeOrder {
    std::vector<uint64_t> handles;      // per source node
    std::vector<uint64_t> first, last;  // record range [first, last) per source
    double network_mb_s = 0;            // for the expectation
};

// The river algorithm's messages. The samples are records of the node's input at random
// positions, each with its place in the global order (key, node, position); the splitters are
// nodes - 1 of them, ascending: node j's partition is [splitter j-1, splitter j).
struct SampleOrder {
    uint64_t count = 0;  // samples wanted (the node sends all its keys when it has fewer)
    uint64_t seed = 0;
};
struct RiverSamples {
    std::vector<Element> samples;
};
struct RiverOrder {
    std::vector<Element> splitters;
    uint64_t expected_share = 0;  // records each node should receive (total / nodes)
    uint64_t batch_bytes = 0;     // the river's batch size, which every node must agree on
};
struct RiverDone {
    uint64_t input_records = 0, records = 0;  // read and sent; received and written
    uint32_t one_pass = 1, runs = 0;
    std::vector<PhaseFigures> phases;
};

// Each message's fields, once, in wire order (the encoding of each type: codec.hpp).
void fields(wire::Is<JobParams> auto &p, auto &f) {
    f(p.record_size, p.key_size, p.memory_budget, p.block_bytes, p.read_depth, p.algorithm,
      p.passes, p.remeasure);
}
void fields(wire::Is<PhaseFigures> auto &p, auto &f) {
    f(p.phase, p.seconds, p.cpu_seconds, p.expected_seconds, p.bytes_read, p.bytes_written,
      p.bytes_sent, p.bytes_received, p.resource);
}
void fields(wire::Is<NodeCheck> auto &c, auto &f) {
    f(c.records, c.disk_read_mb_s, c.disk_write_mb_s, c.disk_mixed_mb_s, c.disk, c.scratch_free,
      c.output_disk, c.output_free);
}
void fields(wire::Is<CountersAnswer> auto &a, auto &f) {
    f(a.progress, a.clock_us, a.phase_names, a.first, a.end, a.samples);
}
void fields(wire::Is<LocalDone> auto &d, auto &f) {
    f(d.records, d.handle, d.phases);
}
void fields(wire::Is<MergeOrder> auto &m, auto &f) {
    f(m.handles, m.first, m.last, m.network_mb_s);
}
// Phase 3a's (parallel_select.hpp).
void fields(wire::Is<Window> auto &w, auto &f) {
    f(w.lo, w.hi);
}
void fields(wire::Is<Element> auto &e, auto &f) {
    f(e.key, e.node, e.pos);
}
void fields(wire::Is<SampleRequest> auto &q, auto &f) {
    f(q.samples, wire::zip(q.windows, q.whole));
}
void fields(wire::Is<SampleReply> auto &r, auto &f) {
    f(r.per_split);
}
void fields(wire::Is<CountRequest> auto &q, auto &f) {
    f(wire::zip(q.windows, q.pivots));
}
void fields(wire::Is<CountReply> auto &r, auto &f) {
    f(r.counts);
}
void fields(wire::Is<SampleOrder> auto &o, auto &f) {
    f(o.count, o.seed);
}
void fields(wire::Is<RiverSamples> auto &r, auto &f) {
    f(r.samples);
}
void fields(wire::Is<RiverOrder> auto &o, auto &f) {
    f(o.splitters, o.expected_share, o.batch_bytes);
}
void fields(wire::Is<RiverDone> auto &d, auto &f) {
    f(d.input_records, d.records, d.one_pass, d.runs, d.phases);
}

// For JobParams, NodeCheck, LocalDone, MergeOrder, PhaseFigures, SampleRequest, SampleReply,
// CountRequest, CountReply, SampleOrder, RiverSamples, RiverOrder, RiverDone and CountersAnswer.
// decode() is false on a message that is not exactly one encoding, or whose figures no sender
// could mean: a block or depth outside the limits above, a record range that ends before it
// starts, a rate or time that is negative or not finite, more samples or phase names than an
// answer may hold, samples that are not whole.
template <typename Message>
std::vector<char> encode(const Message &m);
template <typename Message>
bool decode(const void *data, size_t len, Message &m);
// decode() of a CountersAnswer that says why it refuses one: "" when it decodes.
std::string decode_counters(const void *data, size_t len, CountersAnswer &a);

}  // namespace sortapp::cluster
