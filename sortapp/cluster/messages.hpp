// What the monitor and the sort nodes say to each other over libremoteio:
// command codes, the job's parameters, and each message's encoding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parallel_select.hpp"

namespace sortapp::cluster {

// IPC to a node's sorting thread.
constexpr uint32_t kCmdCheck = 1;     // JobParams -> NodeCheck: inputs and outputs usable?
constexpr uint32_t kCmdLocal = 2;     // u32 nodes sharing the disk -> LocalDone: phases 1 and 2
constexpr uint32_t kCmdMerge = 3;     // MergeOrder -> PhaseFigures: phase 3b
constexpr uint32_t kCmdDone = 4;      // (abort flag) -> PhaseFigures (bytes served): finish
constexpr uint32_t kCmdNetProbe = 5;  // -> PhaseFigures: pull from the next node, timed
constexpr uint32_t kCmdCommit = 6;    // -> nothing: rename the merged output into place
// Served by a node's shadow thread, during phase 3a.
constexpr uint32_t kCmdSamples = 10;   // SampleRequest -> SampleReply
constexpr uint32_t kCmdCounts = 11;    // CountRequest -> CountReply
constexpr uint32_t kCmdProbe = 12;     // u64 n -> n bytes (the network probe's far end)
constexpr uint32_t kCmdProgress = 13;  // -> PhaseFigures: phase, bytes done (read), total (written)
constexpr uint32_t kCmdAbort = 14;     // text (why) -> nothing: remove what the job created, exit
// Served by the monitor's shadow thread (and answered by anyone): are you there?
constexpr uint32_t kCmdPing = 15;

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
};

struct PhaseFigures {
    std::string phase;
    double seconds = 0, cpu_seconds = 0, expected_seconds = 0;
    uint64_t bytes_read = 0, bytes_written = 0, bytes_sent = 0, bytes_received = 0;
    std::string resource;  // what should bound it: "disk", "network", "cpu"
};

struct NodeCheck {
    uint64_t records = 0;
    double disk_read_mb_s = 0, disk_write_mb_s = 0;  // measured or cached
    std::string disk;  // host and device of the scratch disk: nodes sharing one split it
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

// decode() is false on a message that is not exactly one encoding, or whose figures
// no sender could mean: a block or depth outside the limits above, a record range
// that ends before it starts, a rate or time that is negative or not finite.
std::vector<char> encode(const JobParams &p);
bool decode(const void *data, size_t len, JobParams &p);
std::vector<char> encode(const NodeCheck &c);
bool decode(const void *data, size_t len, NodeCheck &c);
std::vector<char> encode(const LocalDone &d);
bool decode(const void *data, size_t len, LocalDone &d);
std::vector<char> encode(const MergeOrder &m);
bool decode(const void *data, size_t len, MergeOrder &m);
std::vector<char> encode(const PhaseFigures &f);
bool decode(const void *data, size_t len, PhaseFigures &f);
std::vector<char> encode(const SampleRequest &r);
bool decode(const void *data, size_t len, SampleRequest &r);
std::vector<char> encode(const SampleReply &r);
bool decode(const void *data, size_t len, SampleReply &r);
std::vector<char> encode(const CountRequest &r);
bool decode(const void *data, size_t len, CountRequest &r);
std::vector<char> encode(const CountReply &r);
bool decode(const void *data, size_t len, CountReply &r);

}  // namespace sortapp::cluster
