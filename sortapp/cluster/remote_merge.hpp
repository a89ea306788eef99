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
    std::string pending_output;   // the complete output under its temporary name
};

struct MergeSettings {
    std::string output;         // the final name; the merge writes a temporary beside it
    std::string temp_tag;       // in the temporary's name (.NAME.sortapp-TAG-XXXXXX)
    size_t block = 512 * 1024;  // bytes per remote read, rounded down to whole records
    unsigned depth = 4;         // reads in flight per source
    int stall_ms = 30000;       // no read completing for this long: a node has stopped
};

// Writes records [first[i], last[i]) of every source i, merged, to a temporary file beside
// settings.output, tracked by sortapp::cleanup; on success its name is in
// result.pending_output, for the node to rename when the whole job commits. On any error the
// temporary is removed, and every read issued has completed (or, from a node that stopped
// answering, has its buffers kept alive) before this returns.
// `progress` (may be empty) sees the bytes written so far and the total now and then.
Status remote_merge(rio_t *rio, msg_context_t *msg, int self, const RecordFormat &format,
                    const MergeOrder &order, const MergeSettings &settings,
                    RemoteMergeResult &result,
                    const std::function<void(uint64_t, uint64_t)> &progress = {});

}  // namespace sortapp::cluster
