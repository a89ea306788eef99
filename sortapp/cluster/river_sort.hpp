// The river sort on one node (NOW-Sort's parallel one- and two-pass sorts): while this node
// reads its input with deep asynchronous reads, every record goes through a river to the node
// whose splitter range holds it; what arrives from every node (this one included) is gathered
// into a run buffer, its sort entries made as it comes. One pass: the buffer holds the node's
// whole partition, which is sorted by key prefix and written once, as the output. Two passes:
// each time the buffer fills it is sorted and written as a run, and the runs are then merged
// into the output (phase 2's merge).
#pragma once

#include <msg/msg.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "messages.hpp"
#include "sortapp/record_format.hpp"
#include "sortapp/status.hpp"

namespace sortapp::cluster {

struct RiverSortSettings {
    RecordFormat format;
    std::string input;
    std::string output;    // the final name; the output is written under a temporary beside it
    std::string temp_tag;  // in the temporary's name
    std::string run_dir;   // the job's directory: runs go there
    std::vector<Element> splitters;
    uint32_t node = 0, nodes = 1;  // this node's rank; the sort nodes are ranks 0..nodes-1
    uint64_t memory_budget = 0;
    uint32_t passes = 0;                // 0: one if the partition fits the budget, else two
    uint64_t expected_share = 0;        // records this node should receive
    uint64_t batch_bytes = 256u << 10;  // the river's batch size (the same on every node)
    int stall_ms = 30000;  // the river's open and close wait no longer for a silent peer
};

struct RiverSortResult {
    uint64_t input_records = 0;  // read and sent
    uint64_t records = 0;        // received, sorted and written
    bool one_pass = true;
    size_t runs = 0;
    PhaseFigures distribute;     // "river": read, send and receive (and write runs), overlapped
    PhaseFigures finish;         // "sort+write" (one pass) or "merge" (two passes)
    std::string pending_output;  // the complete output under its temporary name
};

// Progress: phase name, bytes done, bytes in all.
using RiverProgress = std::function<void(const char *, uint64_t, uint64_t)>;

// The river's batch size for a job of `nodes` with this memory budget per node (0: the
// nodes' own default): 256 KiB, less where the river's buffers (about 9 batches per peer)
// would take more than a quarter of a small budget.
uint64_t river_batch_bytes(uint32_t nodes, uint64_t memory_budget);

// Collective over the sort nodes. On any error everything this created is removed (runs are
// in run_dir, which the caller removes; the temporary output here).
Status river_sort(msg_context_t *msg, const RiverSortSettings &settings, RiverSortResult &result,
                  const RiverProgress &progress);

}  // namespace sortapp::cluster
