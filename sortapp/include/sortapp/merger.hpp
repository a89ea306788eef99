// Phase 2: the local merge. A loser tree merges the runs, each read through its own
// prefetch stream (a ring of two or more buffers), while the output is written asynchronously.
// With more runs than the budget can prefetch well, earlier passes merge groups of runs into
// longer runs.
#pragma once

#include <string>
#include <vector>

#include "sortapp/io_ring.hpp"
#include "sortapp/run_former.hpp"
#include "sortapp/sort_options.hpp"

namespace sortapp {

struct MergeReport {
    MergePlan plan;
    unsigned passes = 0;
};

// Merges `runs` into `output`; run files are removed as soon as they are merged.
Status merge_runs(const SortOptions &options, const MemoryPlan &memory, std::vector<Run> runs,
                  File &output, const std::string &run_dir, MergeReport &report);

}  // namespace sortapp
