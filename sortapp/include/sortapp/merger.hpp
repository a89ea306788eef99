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

// A sorted run kept in memory (RunFormation::kept) and where it stands among the runs in input
// order: before runs[at]. Equal keys leave in input order, so it must stand where it was read.
struct KeptRun {
    const RunBuffer *run = nullptr;
    std::size_t at = 0;
};

// Merges `runs` and the kept run, if any, into `output`; run files are removed as soon as they
// are merged. A kept run needs a one-pass merge (the plan keeps one only then).
Status merge_runs(const SortOptions &options, const MemoryPlan &memory, std::vector<Run> runs,
                  const KeptRun &kept, File &output, const std::string &run_dir,
                  MergeReport &report);

}  // namespace sortapp
