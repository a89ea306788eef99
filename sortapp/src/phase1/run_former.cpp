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

#include "phase1/parallel.hpp"
#include "sortapp/key_sort.hpp"
#include "sortapp/sequential_writer.hpp"

namespace sortapp {

namespace {

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) {
    return (v + a - 1) / a * a;
}

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Memory for one run: its records as read, their sort entries and the radix scratch.
struct RunBuffer {
    Buffer records;
    Buffer entries;
    Buffer scratch;
    std::uint64_t first = 0;  // index of the run's first record in the input
    std::uint64_t count = 0;

    RunBuffer(std::uint64_t run_records, std::size_t record_size)
        : records(round_up(run_records * record_size, io_alignment)),
          entries(run_records * sizeof(SortEntry)),
          scratch(run_records * sizeof(SortEntry)) {}
    SortEntry *entry_data() const { return reinterpret_cast<SortEntry *>(entries.data()); }
    SortEntry *scratch_data() const { return reinterpret_cast<SortEntry *>(scratch.data()); }
};

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

// Sorts a filled run buffer and writes its records in key order to `out`. After the parallel
// partition, a sorter thread finishes the buckets in key order while this thread gathers the
// records of the buckets already sorted into the write-behind ring: sorting overlaps writing.
Status sort_and_write(const SortOptions &o, const MemoryPlan &plan, IoRing &ring, RunBuffer &run,
                      File &out, bool sync, bool entries_ready, Progress &progress,
                      double &sort_seconds) {
    const std::size_t rs = o.format.record_size;
    const unsigned threads = std::max(1u, o.threads);
    double t0 = now_seconds();
    if (!entries_ready)
        make_entries(o.format, run.records.data(), run.count, run.entry_data(), threads);
    StagedKeySort sort(o.format, run.records.data(), run.entry_data(), run.scratch_data(),
                       run.count);
    sort.partition(threads);
    std::atomic<std::uint64_t> sorted{0};  // entries [0, sorted) are final
    std::jthread sorter([&] {
        for (std::size_t b = 0; b < sort.buckets(); ++b) {
            sort.sort_bucket(b);
            sorted.store(sort.end(b), std::memory_order_release);
            sorted.notify_one();
        }
        sort_seconds += now_seconds() - t0;  // read by the caller after join
    });

    SequentialWriter writer(ring, out, plan.write_buffer, plan.write_buffers);
    const SortEntry *e = run.entry_data();
    const std::uint8_t *base = run.records.data();
    Status status;
    for (std::uint64_t j = 0; j < run.count && status;) {
        std::uint64_t ready = sorted.load(std::memory_order_acquire);
        if (ready == j) {
            sorted.wait(ready, std::memory_order_acquire);
            continue;
        }
        std::size_t room;
        std::uint8_t *dst = writer.span(room);
        std::uint64_t k = std::min<std::uint64_t>(room / rs, ready - j);
        if (k == 0) {  // the buffer ends inside a record
            status = writer.append(base + entry_index(e[j]) * rs, rs);
            ++j;
            continue;
        }
        // Once the sort is done, both threads gather.
        const unsigned parts = (ready == run.count && k >= 4096) ? threads : 1;
        auto gather = [&](unsigned t) {
            std::uint64_t lo = k * t / parts, hi = k * (t + 1) / parts;
            for (std::uint64_t i = lo; i < hi; ++i) {
                if (i + 8 < hi) __builtin_prefetch(base + entry_index(e[j + i + 8]) * rs);
                std::memcpy(dst + i * rs, base + entry_index(e[j + i]) * rs, rs);
            }
        };
        parallel_run(parts, gather);
        status = writer.commit(k * rs);
        j += k;
        progress.add(k * rs);
    }
    sorter.join();
    SORTAPP_TRY(status);
    return writer.finish(sync);
}

std::string run_name(const std::string &dir, std::size_t k) {
    char name[32];
    std::snprintf(name, sizeof name, "/run-%06zu", k);
    return dir + name;
}

// All the input fits in memory: one run, sorted and written as the output.
Status form_one_run(const SortOptions &o, const MemoryPlan &plan, const File &input,
                    std::uint64_t records, File &output, Progress &progress, RunFormation &result) {
    const std::size_t rs = o.format.record_size;
    RunBuffer run(records, rs);
    run.count = records;
    // The CPU is idle while the input arrives: make the sort entries of each part as it
    // comes in, and let a helper fault in the radix scratch memory meanwhile.
    std::jthread prefault([&] { std::memset(run.scratch.data(), 0, run.scratch.size()); });
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
    prefault.join();
    return sort_and_write(o, plan, ring, run, output, true, entries_made == records, progress,
                          result.sort_seconds);
}

// Reads the input a run at a time into two slots, one run read while the
// other is sorted and written to a run file of its own.
Status form_sorted_runs(const SortOptions &o, const MemoryPlan &plan, const File &input,
                        std::uint64_t records, const std::string &run_dir, Progress &progress,
                        RunFormation &result) {
    const std::size_t rs = o.format.record_size;
    const std::uint64_t runs = (records + plan.run_records - 1) / plan.run_records;
    RunBuffer slots[2] = {RunBuffer(plan.run_records, rs), RunBuffer(plan.run_records, rs)};
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
            status = sort_and_write(o, plan, write_ring, slots[k % 2], file, false, false, progress,
                                    result.sort_seconds);
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
