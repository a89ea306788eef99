// Sorting a run buffer and writing it in key order (sorted_run.hpp).
#include "sortapp/sorted_run.hpp"

#include <atomic>
#include <cstring>
#include <thread>

#include "sortapp/parallel.hpp"
#include "sortapp/sequential_writer.hpp"
#include "viaduct/clock.hpp"

namespace sortapp {

using viaduct::now_seconds;

namespace {

// Copies the n records the entries name, in the entries' order, to dst, fetching each record a
// few entries ahead.
void gather_records(const SortEntry *e, std::size_t n, const std::uint8_t *base, std::size_t rs,
                    std::uint8_t *dst) {
    for (std::size_t i = 0; i < n; ++i) {
        if (i + 8 < n) __builtin_prefetch(base + entry_index(e[i + 8]) * rs);
        std::memcpy(dst + i * rs, base + entry_index(e[i]) * rs, rs);
    }
}

}  // namespace

void prefault_run(const RunBuffer &run, std::uint64_t records, std::size_t record_size,
                  std::stop_token stop) {
    prefault(run.records, records * record_size, stop);
    prefault(run.entries, records * sizeof(SortEntry), stop);
    prefault(run.scratch, records * sizeof(SortEntry), stop);
}

// Sorts a filled run buffer and writes its records in key order to `out`. After the parallel
// partition, a sorter thread finishes the buckets in key order while this thread gathers the
// records of the buckets already sorted into the write-behind ring: sorting overlaps writing.
Status sort_and_write(const SortOptions &o, const MemoryPlan &plan, IoRing &ring, RunBuffer &run,
                      File &out, bool sync, bool entries_ready,
                      const std::function<void(std::uint64_t)> &progress, double &sort_seconds) {
    const std::size_t rs = o.format.record_size;
    const unsigned threads = std::max(1u, o.threads);
    SORTAPP_TRY(out.reserve(run.count * rs));
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
            gather_records(e + j + lo, hi - lo, base, rs, dst + lo * rs);
        };
        parallel_run(parts, gather);
        status = writer.commit(k * rs);
        j += k;
        if (progress) progress(k * rs);
    }
    sorter.join();
    SORTAPP_TRY(status);
    return writer.finish(sync);
}

Status SortedRunSource::start_read(unsigned, std::uint8_t *buffer, std::uint64_t offset,
                                   std::size_t bytes) {
    const std::size_t rs = record_size_;
    if (offset % rs != 0 || bytes % rs != 0 || offset / rs + bytes / rs > run_.count)
        return Status::error("a read outside the sorted run in memory");
    gather_records(run_.entry_data() + offset / rs, bytes / rs, run_.records.data(), rs, buffer);
    return Status::ok();
}

}  // namespace sortapp
