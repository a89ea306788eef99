// `sortapp local`: the whole single-node external sort of one file into another, with
// expectations before and a report after each phase.
#pragma once

#include <atomic>
#include <cstdint>
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
    std::uint64_t kept_records = 0;  // records of the run kept in memory (two passes), or 0
    unsigned merge_passes = 0;
    MemoryPlan memory;
    MergePlan merge;
    std::vector<PhaseReport> phases;
    // A phase beat its expectation: the disk figure was stale. After the sort its cache entry
    // was marked stale (stale_note says so); nothing was measured.
    bool figure_stale = false;
    std::string stale_note;
};

// Sorts input into output. Output appears only when everything worked: the records are
// written to a temporary name beside it and renamed at the end; on any error, the temporary
// file and every run are removed. The output stays in cleanup's registry (a later failure
// of the caller removes it) until the caller untracks it. `disk` (may be all zero) sets the
// expected phase times; `on_phase` (may be empty) sees each phase report as soon as the phase ends.
Status local_sort(const SortOptions &options, const std::string &input, const std::string &output,
                  const DiskBandwidth &disk, LocalSortResult &result,
                  const std::function<void(const PhaseReport &)> &on_phase = {});

// The phases of a local sort in the order they run, as its progress and its timeline name
// them: "starting" (the checks, the plan, the output created), "phase 1" (run formation, or
// the whole of a one-pass sort), "phase 2" (the merge), "finishing" (the input checked
// unchanged, the output flushed and renamed into place).
const std::vector<std::string> &local_sort_phases();

// What a local sort has done so far, for a counter sampler that reads it from its own thread
// (atomics). Fed by the sort's SortOptions::progress calls (made one at a time) and by its
// phase reports. Records and bytes count the work of every phase: each record counts once in
// phase 1 and once per merge pass, so a two-pass sort ends at twice its input.
class LocalSortProgress {
  public:
    explicit LocalSortProgress(std::size_t record_size) : record_size_(record_size) {}

    // SortOptions::progress's arguments: the phase by name, its bytes done out of its total.
    void progress(const char *phase, std::uint64_t done, std::uint64_t total);
    // A phase's report: after the last one ("one-pass", "phase 2") the sort is finishing.
    void phase_ended(const PhaseReport &report);

    // An index into local_sort_phases().
    std::uint32_t phase() const { return phase_.load(std::memory_order_relaxed); }
    std::uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    std::uint64_t records() const { return record_size_ ? bytes() / record_size_ : 0; }

  private:
    const std::size_t record_size_;
    std::atomic<std::uint32_t> phase_{0};
    std::atomic<std::uint64_t> bytes_{0};
    std::uint64_t phase_done_ = 0;  // the current phase's last `done`
};

}  // namespace sortapp
