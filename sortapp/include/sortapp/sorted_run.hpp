// A sorted run: one buffer of records with their sort entries, sorted by key prefix and
// written in key order, sorting overlapping writing. Phase 1 forms its runs (or, in one pass,
// the output) so; the cluster's river sort writes what arrives so.
#pragma once

#include <cstdint>
#include <functional>
#include <stop_token>

#include "sortapp/io_ring.hpp"
#include "sortapp/key_sort.hpp"
#include "sortapp/record_stream.hpp"
#include "sortapp/sort_options.hpp"

namespace sortapp {

// Memory for one run: its records as read, their sort entries and the radix scratch.
struct RunBuffer {
    Buffer records;
    Buffer entries;
    Buffer scratch;
    std::uint64_t first = 0;  // index of the run's first record in the input
    std::uint64_t count = 0;

    RunBuffer(std::uint64_t run_records, std::size_t record_size, Fill fill)
        : records((run_records * record_size + io_alignment - 1) / io_alignment * io_alignment,
                  fill),
          entries(run_records * sizeof(SortEntry), fill),
          scratch(run_records * sizeof(SortEntry), fill) {}
    SortEntry *entry_data() const { return reinterpret_cast<SortEntry *>(entries.data()); }
    SortEntry *scratch_data() const { return reinterpret_cast<SortEntry *>(scratch.data()); }
};

// Faults in what the first `records` records of a run buffer filled once will touch (records,
// entries, radix scratch, in that order), for a helper thread while the data arrives
// (prefault in io_ring.hpp); stops early when asked.
void prefault_run(const RunBuffer &run, std::uint64_t records, std::size_t record_size,
                  std::stop_token stop);

// Sorts run.count records of a filled run buffer and writes them in key order to `out`, from
// its start, through `ring` (plan's write buffers), its space reserved first. entries_ready:
// the entries were made as the records arrived. sync: fsync at the end. progress (may be
// empty) is told of each n bytes written; sort_seconds grows by the time the sort took.
Status sort_and_write(const SortOptions &o, const MemoryPlan &plan, IoRing &ring, RunBuffer &run,
                      File &out, bool sync, bool entries_ready,
                      const std::function<void(std::uint64_t)> &progress, double &sort_seconds);

// A sorted run kept in memory, read as a record stream's blocks: each read gathers its
// records in key order through the run's sorted entries (the merge's view of a kept run).
// Offsets and lengths are in bytes of the sorted run, in whole records.
class SortedRunSource final : public BlockSource {
  public:
    SortedRunSource(const RunBuffer &run, std::size_t record_size)
        : run_(run), record_size_(record_size) {}
    void set_slots(unsigned) override {}
    Status start_read(unsigned slot, std::uint8_t *buffer, std::uint64_t offset,
                      std::size_t bytes) override;
    Status finish_read(unsigned) override { return Status::ok(); }

  private:
    const RunBuffer &run_;
    std::size_t record_size_;
};

}  // namespace sortapp
