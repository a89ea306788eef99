// `sortapp local`: the whole single-node external sort of one file into another, with
// expectations before and a report after each phase.
#pragma once

#include <string>
#include <vector>

#include "sortapp/disk_probe.hpp"
#include "sortapp/report.hpp"
#include "sortapp/sort_options.hpp"

namespace sortapp {

struct LocalSortResult {
    std::uint64_t records = 0;
    bool one_pass = false;
    std::size_t runs = 0;
    unsigned merge_passes = 0;
    MemoryPlan memory;
    MergePlan merge;
    std::vector<PhaseReport> phases;
    // A phase beat its expectation: the disk figure was stale. After the sort it was measured
    // again (`remeasured`, cached) or marked for the next run, as disk.source.on_stale says.
    bool figure_stale = false;
    std::string stale_note;
    DiskBandwidth remeasured;
};

// Sorts input into output. Output appears only when everything worked: the records are
// written to a temporary name beside it and renamed at the end; on any error, the temporary
// file and every run are removed. The output stays in cleanup's registry (a later failure
// of the caller removes it) until the caller untracks it. `disk` (may be all zero) sets the
// expected phase times; `on_phase` (may be empty) sees each phase report as soon as the phase ends.
Status local_sort(const SortOptions &options, const std::string &input, const std::string &output,
                  const DiskBandwidth &disk, LocalSortResult &result,
                  const std::function<void(const PhaseReport &)> &on_phase = {});

}  // namespace sortapp
