// Phase 1. Two run buffers: a reader thread fills one with deep asynchronous reads while the
// sorting thread sorts the other's entries and gathers its records, in key order, into the
// write-behind ring of the run file. With one pass, a single buffer holds the whole input.
#include "sortapp/run_former.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "sortapp/key_sort.hpp"
#include "sortapp/parallel.hpp"
#include "sortapp/sorted_run.hpp"
#include "viaduct/clock.hpp"

namespace sortapp {

namespace {

using viaduct::now_seconds;

struct Progress {
    Progress(const SortOptions &o, std::uint64_t t) : options(o), total(t) {}
    const SortOptions &options;
    std::uint64_t total;
    std::mutex mutex;
    std::uint64_t done = 0;
    void add(std::uint64_t n) {
        if (!options.progress) return;
        std::lock_guard lock(mutex);
        done += n;
        options.progress("phase 1", done, total);
    }
};

std::string run_name(const std::string &dir, std::size_t k) {
    char name[32];
    std::snprintf(name, sizeof name, "/run-%06zu", k);
    return dir + name;
}

// All the input fits in memory: one run, sorted and written as the output.
Status form_one_run(const SortOptions &o, const MemoryPlan &plan, const File &input,
                    std::uint64_t records, File &output, Progress &progress, RunFormation &result) {
    const std::size_t rs = o.format.record_size;
    RunBuffer run(records, rs, Fill::once);
    run.count = records;
    // The CPU is idle while the input arrives: make the sort entries of each part as it
    // comes in, and let a helper fault in the buffer's memory meanwhile, ahead of the reads.
    std::jthread prefaulter([&](std::stop_token stop) { prefault_run(run, records, rs, stop); });
    IoRing ring;
    SORTAPP_TRY(ring.init(o.io_depth));
    std::uint64_t arrived = 0, entries_made = 0;
    SORTAPP_TRY(read_sequential(
        ring, input, run.records.data(), 0, records * rs, o.io_size, [&](std::uint64_t n) {
            arrived += n;
            std::uint64_t whole = arrived / rs;
            make_entries_range(o.format, run.records.data(), entries_made, whole, run.entry_data());
            entries_made = whole;
            progress.add(n);
        }));
    prefaulter.join();
    return sort_and_write(
        o, plan, ring, run, output, true, entries_made == records,
        [&](std::uint64_t n) { progress.add(n); }, result.sort_seconds);
}

// Reads the input a run at a time into two slots, one run read while the
// other is sorted and written to a run file of its own.
Status form_sorted_runs(const SortOptions &o, const MemoryPlan &plan, const File &input,
                        std::uint64_t records, const std::string &run_dir, Progress &progress,
                        RunFormation &result) {
    const std::size_t rs = o.format.record_size;
    const std::uint64_t runs = (records + plan.run_records - 1) / plan.run_records;
    RunBuffer slots[2] = {RunBuffer(plan.run_records, rs, Fill::many),
                          RunBuffer(plan.run_records, rs, Fill::many)};
    // Slot k % 2 holds run k. filled counts runs read; consumed counts runs written.
    std::mutex mutex;
    std::condition_variable changed;
    std::uint64_t filled = 0, consumed = 0;
    bool stop = false;
    Status read_status;

    // One ring for all the run writes, alive as long as the reader's: rings that come and go
    // while another thread's ring lives would reuse its addresses, which a race detector
    // cannot tell from a race (liburing maps them with raw system calls).
    IoRing write_ring;
    SORTAPP_TRY(write_ring.init(plan.write_buffers + 1));
    std::jthread reader([&] {
        Status s;
        {
            IoRing ring;
            s = ring.init(o.io_depth);
            for (std::uint64_t k = 0; k < runs && s; ++k) {
                {
                    std::unique_lock lock(mutex);
                    changed.wait(lock, [&] { return stop || k < consumed + 2; });
                    if (stop) break;
                }
                RunBuffer &slot = slots[k % 2];
                slot.first = k * plan.run_records;
                slot.count = std::min(plan.run_records, records - slot.first);
                s = read_sequential(ring, input, slot.records.data(), slot.first * rs,
                                    slot.count * rs, o.io_size,
                                    [&](std::uint64_t n) { progress.add(n); });
                std::lock_guard lock(mutex);
                if (s) ++filled;
                changed.notify_all();
            }
        }  // the ring is gone before the result is published (its memory may be reused)
        std::lock_guard lock(mutex);
        read_status = s;
        stop = stop || !s;
        changed.notify_all();
    });

    Status status;
    for (std::uint64_t k = 0; k < runs; ++k) {
        {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return filled > k || !read_status || stop; });
            if (filled <= k) {
                status = read_status ? Status::error("reading the input stopped") : read_status;
                break;
            }
        }
        Run run{run_name(run_dir, k), slots[k % 2].count};
        File file;
        status = File::create(run.path, o.direct_io, false, file);
        if (status) result.runs.push_back(run);  // listed at once, so a failure removes it
        if (status)
            status = sort_and_write(
                o, plan, write_ring, slots[k % 2], file, false, false,
                [&](std::uint64_t n) { progress.add(n); }, result.sort_seconds);
        std::lock_guard lock(mutex);
        ++consumed;
        if (!status) stop = true;
        changed.notify_all();
        if (!status) break;
    }
    reader.join();
    if (status && !read_status) status = read_status;
    return status;
}

}  // namespace

Status form_runs(const SortOptions &o, const MemoryPlan &plan, const File &input,
                 std::uint64_t records, File &output, const std::string &run_dir,
                 RunFormation &result) {
    result = RunFormation();
    result.records = records;
    const std::size_t rs = o.format.record_size;
    Progress progress(o, 2 * records * rs);
    if (records == 0 || plan.one_pass) {
        result.one_pass = true;
        if (records == 0) return Status::ok();
        return form_one_run(o, plan, input, records, output, progress, result);
    }
    return form_sorted_runs(o, plan, input, records, run_dir, progress, result);
}

}  // namespace sortapp
