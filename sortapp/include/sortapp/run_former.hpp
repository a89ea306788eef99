// Phase 1: run formation. Reads the input with deep asynchronous I/O, sorts key-prefix entries
// and writes sorted runs; when the input fits the memory budget it writes the output directly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sortapp/io_ring.hpp"
#include "sortapp/sort_options.hpp"
#include "sortapp/sorted_run.hpp"

namespace sortapp {

struct Run {
    std::string path;
    std::uint64_t records = 0;
};

struct RunFormation {
    std::uint64_t records = 0;
    bool one_pass = false;    // the output was written, no runs
    std::vector<Run> runs;    // otherwise, the runs written, in input order
    double sort_seconds = 0;  // time spent in the in-core sort (all runs)
    // With plan.keep_last_run: the last run formed, sorted but not written. In input order it
    // comes before runs[kept_at] (after them all when kept_at is runs.size()).
    std::unique_ptr<RunBuffer> kept;
    std::size_t kept_at = 0;
};

// `input` is an open input file of `records` records. With plan.one_pass, the sorted records
// go to `output`; otherwise runs are created in run_dir, and the last one formed stays in
// memory where the plan says so. The input's short run, if any, is formed first, so that the
// run kept is a full one.
Status form_runs(const SortOptions &options, const MemoryPlan &plan, const File &input,
                 std::uint64_t records, File &output, const std::string &run_dir,
                 RunFormation &result);

}  // namespace sortapp
