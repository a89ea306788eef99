// How the memory budget is divided between run buffers, sort entries, write buffers and the
// merge's prefetch streams.
#include "sortapp/sort_options.hpp"

#include <algorithm>
#include <numeric>

#include "sortapp/io_ring.hpp"
#include "sortapp/key_sort.hpp"

namespace sortapp {

namespace {

constexpr std::uint64_t max_io_unit_bytes = 4u << 20;
// Per record in memory during phase 1: the record, its sort entry and the radix scratch entry.
constexpr std::uint64_t entry_bytes = 32;

std::uint64_t round_down(std::uint64_t v, std::uint64_t unit) {
    return v / unit * unit;
}

void plan_write_buffers(const SortOptions &o, MemoryPlan &plan) {
    std::uint64_t size = std::max<std::uint64_t>(o.io_size, 64u << 10);
    if (4 * size > o.memory_budget / 8) {
        size = std::max<std::uint64_t>(16u << 10, o.memory_budget / 32);
    }
    plan.write_buffer =
        std::size_t(std::max<std::uint64_t>(io_alignment, round_down(size, io_alignment)));
    // As many writes in flight as reads (--io-depth) when the budget can spare it.
    std::uint64_t deep = std::clamp<std::uint64_t>(o.io_depth + 1, 4, 16);
    plan.write_buffers = deep * plan.write_buffer <= o.memory_budget / 16 ? unsigned(deep) : 4;
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t unit) {
    return (v + unit - 1) / unit * unit;
}

std::string mib(std::uint64_t bytes) {
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

}  // namespace

std::uint64_t records_per_io_unit(const RecordFormat &format) {
    std::uint64_t rs = format.record_size;
    std::uint64_t unit = io_alignment / std::gcd<std::uint64_t>(rs, io_alignment);
    return unit * rs <= max_io_unit_bytes ? unit : 1;
}

Status plan_memory(const SortOptions &o, std::uint64_t records, MemoryPlan &plan) {
    SORTAPP_TRY(o.format.validate());
    plan = MemoryPlan();
    plan_write_buffers(o, plan);
    const std::uint64_t rs = o.format.record_size;
    const std::uint64_t unit = records_per_io_unit(o.format);
    const std::uint64_t writers = std::uint64_t(plan.write_buffer) * plan.write_buffers;
    // Smallest budget that allows two one-unit runs in phase 1 and a 2-way merge in phase 2.
    std::uint64_t minimum = std::max<std::uint64_t>(
        {minimum_memory_budget, writers + 2 * unit * (rs + entry_bytes) + io_alignment,
         writers + 4 * unit * rs});
    if (o.memory_budget < minimum) {
        return Status::error("memory budget " + std::to_string(o.memory_budget) +
                             " bytes is below the minimum of " + std::to_string(minimum) +
                             " bytes (" + mib(minimum) + ") for " + o.format.describe());
    }
    if (o.io_size < io_alignment || o.io_size % io_alignment != 0) {
        return Status::error("I/O size must be a positive multiple of 4096 bytes");
    }
    if (o.io_depth == 0 || o.io_depth > 4096) return Status::error("I/O depth must be 1 to 4096");
    std::uint64_t one_pass_bytes = records * (rs + entry_bytes) + io_alignment + writers;
    if (one_pass_bytes <= o.memory_budget && records <= max_records_per_sort) {
        plan.one_pass = true;
        plan.run_records = records;
        plan.phase1_bytes = one_pass_bytes;
        return Status::ok();
    }
    plan.run_records =
        round_down((o.memory_budget - writers - 2 * io_alignment) / (2 * (rs + entry_bytes)), unit);
    plan.run_records = std::min(plan.run_records, max_records_per_sort);
    plan.phase1_bytes = 2 * plan.run_records * (rs + entry_bytes) + writers;
    // Kept, a run holds its records and sorted entries (the radix scratch goes back). It saves
    // writing and reading one run, which is worth it only where the merge of the others keeps
    // its buffers, its depth and its one pass: smaller merge reads would cost more.
    const std::uint64_t runs = (records + plan.run_records - 1) / plan.run_records;
    const MergePlan written = plan_merge(o, plan, runs);
    plan.kept_bytes =
        round_up(plan.run_records * rs, io_alignment) + plan.run_records * sizeof(SortEntry);
    const MergePlan kept = plan_merge(o, plan, runs);
    plan.keep_last_run = kept.passes == 1 && kept.stream_buffer == written.stream_buffer &&
                         kept.stream_depth == written.stream_depth;
    if (!plan.keep_last_run) plan.kept_bytes = 0;
    return Status::ok();
}

MergePlan plan_merge(const SortOptions &o, const MemoryPlan &memory, std::size_t runs) {
    MergePlan p;
    const std::uint64_t unit_bytes = records_per_io_unit(o.format) * o.format.record_size;
    const std::uint64_t writers = std::uint64_t(memory.write_buffer) * memory.write_buffers;
    const std::uint64_t held = writers + memory.kept_bytes;
    const std::uint64_t avail = o.memory_budget > held ? o.memory_budget - held : 0;
    auto fit = [&](std::uint64_t b) { return std::max(unit_bytes, round_down(b, unit_bytes)); };
    std::uint64_t stream = fit(o.merge_buffer);
    std::size_t n = std::max<std::size_t>(runs, 1);
    const unsigned depth = std::max(2u, o.merge_depth);
    p.stream_depth = 2;
    if (n * depth * stream <= avail) {
        // Deep prefetch: depth - 1 reads in flight per run.
        p.stream_buffer = std::size_t(stream);
        p.stream_depth = depth;
        p.fan_in = n;
    } else if (n * 2 * stream <= avail) {
        p.stream_buffer = std::size_t(stream);
        p.fan_in = n;
    } else {
        std::uint64_t shrunk = round_down(avail / (2 * n), unit_bytes);
        std::uint64_t floor_buffer = fit(o.min_merge_buffer);
        if (shrunk >= floor_buffer) {
            p.stream_buffer = std::size_t(shrunk);
            p.fan_in = n;
        } else {
            p.stream_buffer = std::size_t(floor_buffer);
            p.fan_in = std::size_t(avail / (2 * floor_buffer));
            if (p.fan_in < 2) {
                p.stream_buffer = std::size_t(unit_bytes);
                p.fan_in = std::max<std::size_t>(2, std::size_t(avail / (2 * unit_bytes)));
            }
        }
    }
    p.passes = 1;
    for (std::size_t left = n; left > p.fan_in; left = (left + p.fan_in - 1) / p.fan_in) ++p.passes;
    return p;
}

}  // namespace sortapp
