// The knobs of the single-node sort and how a memory budget is split between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "sortapp/record_format.hpp"
#include "sortapp/status.hpp"

namespace sortapp {

// Called now and then with the bytes a phase has done out of its total.
using ProgressFn = std::function<void(const char *phase, std::uint64_t done, std::uint64_t total)>;

struct SortOptions {
    RecordFormat format;
    std::uint64_t memory_budget = 0;            // bytes; must be >= minimum_memory_budget
    std::string scratch_dir = ".";              // where runs go
    std::size_t io_size = 2u << 20;             // bytes per read/write request (the paper: 2 MB)
    unsigned io_depth = 15;                     // requests outstanding (the paper: 30 MB in all)
    std::size_t merge_buffer = 1280u << 10;     // per prefetch buffer of a run in the merge
    unsigned merge_depth = 4;                   // prefetch buffers per run (2: double buffering)
    std::size_t min_merge_buffer = 128u << 10;  // below this, merge in more passes instead
    unsigned threads = 2;
    bool direct_io = true;    // O_DIRECT where the file system allows it
    bool check_space = true;  // refuse a sort whose runs and output exceed the free space
    ProgressFn progress;
};

inline constexpr std::uint64_t minimum_memory_budget = 1u << 20;

// Records per I/O unit: the smallest whole number of records that is also a whole number of
// direct-I/O blocks (or 1 record when that would be unreasonably large).
std::uint64_t records_per_io_unit(const RecordFormat &format);

struct MemoryPlan {
    bool one_pass = false;
    std::uint64_t run_records = 0;   // records per sorted run (phase 1)
    std::size_t write_buffer = 0;    // bytes per write buffer
    unsigned write_buffers = 0;      // how many (writes in flight + one being filled)
    std::uint64_t phase1_bytes = 0;  // memory phase 1 will use
    // Two passes: the last run formed stays in memory, sorted, and joins the merge without a
    // trip through the disk, where the merge of the others still fits beside it unchanged.
    bool keep_last_run = false;
    std::uint64_t kept_bytes = 0;  // the memory the kept run holds during the merge
};

// Splits the budget: one pass when records, their sort entries and the write buffers fit;
// otherwise two run buffers (one being read while the other is sorted and written), and the
// last run kept in memory where a one-pass merge still fits beside it.
Status plan_memory(const SortOptions &options, std::uint64_t records, MemoryPlan &plan);

struct MergePlan {
    std::size_t stream_buffer = 0;  // bytes per prefetch buffer
    unsigned stream_depth = 2;      // prefetch buffers per run: depth - 1 reads in flight
    std::size_t fan_in = 0;         // runs merged at once
    unsigned passes = 0;            // merge passes over the data (1 = straight to the output)
};

// The merge of `runs` runs (a kept run counted among them) in what the budget leaves beside
// the write buffers and the kept run.
MergePlan plan_merge(const SortOptions &options, const MemoryPlan &memory, std::size_t runs);

}  // namespace sortapp
