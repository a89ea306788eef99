// Phase 1. Two run buffers: a reader thread fills one with deep asynchronous reads while the
// sorting thread sorts the other's entries and gathers its records, in key order, into the
// write-behind ring of the run file. With one pass, a single buffer holds the whole input.
#include "sortapp/run_former.hpp"

#include <algorithm>
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

// Sorts a filled slot and writes it as the run file `path`, listed in result.runs at once (a
// failure then removes it).
Status write_run(const SortOptions &o, const MemoryPlan &plan, IoRing &ring, RunBuffer &slot,
                 const std::string &path, Progress &progress, RunFormation &result) {
    File file;
    SORTAPP_TRY(File::create(path, o.direct_io, false, file));
    result.runs.push_back(Run{path, slot.count});
    return sort_and_write(
        o, plan, ring, slot, file, false, false, [&](std::uint64_t n) { progress.add(n); },
        result.sort_seconds);
}

// The order runs are formed in: the k-th formed is the input's input_run(k)-th. A short last
// run goes first where a run is kept, so that the run kept in memory is a full one.
struct FormingOrder {
    std::uint64_t runs;
    bool short_first;
    std::uint64_t input_run(std::uint64_t k) const {
        return !short_first ? k : k == 0 ? runs - 1 : k - 1;
    }
};

// Sorts the last run formed and keeps it, its radix scratch given back: the merge reads it
// from memory.
void keep_run(const SortOptions &o, RunBuffer &&slot, std::uint64_t input_run,
              RunFormation &result) {
    const double t0 = now_seconds();
    const unsigned threads = std::max(1u, o.threads);
    make_entries(o.format, slot.records.data(), slot.count, slot.entry_data(), threads);
    sort_entries(o.format, slot.records.data(), slot.entry_data(), slot.scratch_data(), slot.count,
                 threads);
    slot.scratch = Buffer();
    result.kept = std::make_unique<RunBuffer>(std::move(slot));
    result.kept_at = std::size_t(input_run);  // the runs before it in the input are written
    result.sort_seconds += now_seconds() - t0;
}

// Reads the input a run at a time into two slots, one run read while the
// other is sorted and written to a run file of its own.
Status form_sorted_runs(const SortOptions &o, const MemoryPlan &plan, const File &input,
                        std::uint64_t records, const std::string &run_dir, Progress &progress,
                        RunFormation &result) {
    const std::size_t rs = o.format.record_size;
    const std::uint64_t runs = (records + plan.run_records - 1) / plan.run_records;
    const FormingOrder order{runs, plan.keep_last_run && records % plan.run_records != 0};
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
                slot.first = order.input_run(k) * plan.run_records;
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
        if (plan.keep_last_run && k + 1 == runs) {
            keep_run(o, std::move(slots[k % 2]), order.input_run(k), result);
            progress.add(result.kept->count * rs);  // its write is not needed
            break;
        }
        status =
            write_run(o, plan, write_ring, slots[k % 2], run_name(run_dir, k), progress, result);
        std::lock_guard lock(mutex);
        ++consumed;
        if (!status) stop = true;
        changed.notify_all();
        if (!status) break;
    }
    reader.join();
    if (status && !read_status) status = read_status;
    // In input order: the short run formed first is the input's last.
    if (status && order.short_first && !result.runs.empty())
        std::rotate(result.runs.begin(), result.runs.begin() + 1, result.runs.end());
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
