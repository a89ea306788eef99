// Phase 3b: a node pulls its output partition's range of every node's work
// file through libremoteio — a ring of large reads in flight per source — and
// merges the P sorted streams with a loser tree into its output file, written
// through a ring of buffers, so reading, merging and writing overlap.
#pragma once

#include <rio/rio.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "messages.hpp"
#include "sortapp/record_format.hpp"
#include "sortapp/status.hpp"

namespace sortapp::cluster {

struct RemoteMergeResult {
    uint64_t records = 0;
    uint64_t bytes_received = 0;  // pulled from other nodes
    uint64_t bytes_local = 0;     // pulled from this node's own work file
};

// Writes records [first[i], last[i]) of every source i, merged, to `output`
// (a temporary name beside it, renamed when complete). `block` is rounded down
// to whole records.
// `progress` (may be empty) sees the bytes written so far and the total now and then.
Status remote_merge(rio_t *rio, msg_context_t *msg, int self, const RecordFormat &format,
                    const MergeOrder &order, size_t block, unsigned depth,
                    const std::string &output, RemoteMergeResult &result,
                    const std::function<void(uint64_t, uint64_t)> &progress = {});

}  // namespace sortapp::cluster
