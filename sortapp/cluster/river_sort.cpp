// The river sort on one node (river_sort.hpp). Two threads share the river, as a rank that is
// both a source and a sink must: this one reads the input and puts its records, a gatherer
// gets what arrives. The sort itself is phase 1's (sorted_run.hpp), the two-pass merge phase
// 2's (merger.hpp).
#include "river_sort.hpp"

#include <river/river.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>

#include "sortapp/merger.hpp"
#include "sortapp/pending_file.hpp"
#include "sortapp/report.hpp"
#include "sortapp/sorted_run.hpp"
#include "splitters.hpp"

namespace sortapp::cluster {

namespace {

constexpr int kCredits = 4;
// Input read per read_sequential call. Every byte of it is fresh memory the kernel zeroes once
// (on a virtual machine whose host reclaims freed memory, the dearest part of the footprint), and
// the reads run io_depth deep within it, so a few tens of I/O sizes are enough.
constexpr uint64_t kMaxChunkBytes = 16u << 20;

// A sixteenth of the budget, at most 16 MiB, at least one I/O unit.
uint64_t chunk_records(const RiverSortSettings &s) {
    const uint64_t unit = records_per_io_unit(s.format);
    const uint64_t bytes = std::min(kMaxChunkBytes, s.memory_budget / 16);
    return std::max<uint64_t>(unit, bytes / s.format.record_size / unit * unit);
}

// The river's error as a Status naming the peer, after `what`.
Status river_failure(river_t *river, int rc, const char *what) {
    char text[256] = {};
    int rank = -1;
    if (river != nullptr && river_error(river, &rank, text, sizeof text) != RIVER_OK && text[0])
        return Status::error(std::string("river sort, ") + what + ": " + text);
    return Status::error(std::string("river sort, ") + what + ": " + river_strerror(rc));
}

// The river's pick-stream: a record's place in the global order is its key, this node and
// its position in the input, which is where it lies in the chunk river_put_records was given.
struct Picker {
    const Partitioner *part = nullptr;
    const uint8_t *base = nullptr;
    uint64_t base_pos = 0;
    size_t record_size = 0;
    std::vector<uint64_t> per_sink;
};

int pick_record(void *arg, const void *record, size_t, int) {
    auto *p = static_cast<Picker *>(arg);
    const auto *rec = static_cast<const uint8_t *>(record);
    const uint64_t pos = p->base_pos + static_cast<uint64_t>(rec - p->base) / p->record_size;
    const int sink = p->part->pick(rec, pos);
    ++p->per_sink[static_cast<size_t>(sink)];
    return sink;
}

// Record slots one placed batch takes (a frame of the run buffer): its records and the
// river's trailer after them.
uint64_t batch_records(const RiverSortSettings &s) {
    return std::max<uint64_t>(1, s.batch_bytes / s.format.record_size);
}
uint64_t frame_slots(const RiverSortSettings &s) {
    const uint64_t rs = s.format.record_size;
    return (batch_records(s) * rs + RIVER_TRAILER_BYTES + rs - 1) / rs;
}

// Frames that hold no record of a one-pass partition: those awaiting a batch when the flow
// ends (nodes x credits), the one placed next, and one per source for its last, partly
// filled, batch. Two passes need only the first two to go on.
uint64_t spare_frames(const RiverSortSettings &s, bool one_pass) {
    return uint64_t{s.nodes} * kCredits + 1 + (one_pass ? s.nodes : 0);
}

// Records a run buffer of `slots` slots is sure to hold in one pass, and the slots that hold
// `records` in runs.
uint64_t records_held(const RiverSortSettings &s, uint64_t slots) {
    const uint64_t frames = slots / frame_slots(s), spare = spare_frames(s, true);
    return frames <= spare ? 0 : (frames - spare) * batch_records(s);
}
uint64_t slots_holding(const RiverSortSettings &s, uint64_t records) {
    const uint64_t batches = (records + batch_records(s) - 1) / batch_records(s);
    return (batches + spare_frames(s, false)) * frame_slots(s);
}

// What arrives at this node lands in the run buffer itself: the buffer is cut into frames of
// one batch each, the river receives every batch straight into a free frame handed out here
// (river_place_fn), and the batch's sort entries are made where it landed, so no record is
// copied out of the river. Two passes: when no frame is free (or a run holds a quarter of the
// partition, with --passes 2), the records got so far are sorted and written as a run and
// their frames are free again, while those still awaiting a batch (at most nodes x credits)
// stay as they are.
class Gatherer {
  public:
    Gatherer(const RiverSortSettings &s, const SortOptions &so, const MemoryPlan &plan,
             uint64_t slots)
        : buf(slots, s.format.record_size, s.passes == 2 ? Fill::many : Fill::once),
          s_(s),
          so_(so),
          plan_(plan),
          frame_(frame_slots(s)),
          frames_(slots / frame_),
          run_records_(s.passes == 2 ? s.expected_share / 4 + records_per_io_unit(s.format)
                                     : UINT64_MAX) {
        for (uint64_t f = frames_; f-- > 0;) free_.push_back(f);  // handed out from frame 0 up
    }

    Status init() {
        if (!buf.records.valid() || !buf.entries.valid() || !buf.scratch.valid())
            return Status::error("river sort: cannot map " + std::to_string(frames_ * frame_) +
                                 " records' worth of memory");
        if (s_.passes == 1) {
            // One pass fills the buffer once, from its first frame up: a helper faults in the
            // part the share will take while the first batches are still being read.
            const uint64_t share = std::min(frames_ * frame_, s_.expected_share + 2 * frame_);
            prefaulter_ = std::jthread([this, share](std::stop_token stop) {
                prefault_run(buf, share, s_.format.record_size, stop);
            });
        }
        return ring.init(plan_.write_buffers + 1);
    }

    // river_place_fn: a free frame, or null (the river then fails) when none is, which
    // take() prevents by spilling first.
    static void *place(void *arg, int, size_t bytes) {
        auto *g = static_cast<Gatherer *>(arg);
        const size_t rs = g->s_.format.record_size;
        if (g->free_.empty() || bytes > g->frame_ * rs) return nullptr;
        const uint64_t f = g->free_.back();
        g->free_.pop_back();
        return g->buf.records.data() + f * g->frame_ * rs;
    }

    // A batch got: its entries made where it landed, and a frame made free for the batch its
    // release asks for.
    Status take(const river_batch_t &b, int self) {
        const std::optional<uint64_t> f = frame_of(b);
        if (!f) return Status::error("river sort: a batch outside the run buffer's frames");
        if (b.source != self) from_others += b.count;
        records += b.count;
        make_entries_at(s_.format, buf.records.data(), *f * frame_, b.count,
                        buf.entry_data() + buf.count);
        buf.count += b.count;
        taken_.push_back(*f);
        if (buf.count < run_records_ && !free_.empty()) return Status::ok();
        SORTAPP_TRY(spill());
        if (!free_.empty()) return Status::ok();
        return Status::error("river sort: no frame of the run buffer left for a batch (" +
                             std::to_string(frames_) + " frames)");
    }

    // After a failure of its own: the batch's frame, and every frame got, are free again.
    void drop(const river_batch_t &b) {
        if (const std::optional<uint64_t> f = frame_of(b)) taken_.push_back(*f);
        release_taken();
        buf.count = 0;
    }

    // The records got so far, sorted, as the next run; their frames free again.
    Status spill() {
        if (s_.passes == 1)
            return Status::error("one pass: this node's partition holds more than the " +
                                 std::to_string(records_held(s_, frames_ * frame_)) +
                                 " records its memory budget holds " +
                                 "(use --passes 2 or auto, or a larger --memory)");
        char name[32];
        std::snprintf(name, sizeof name, "/river-run-%06zu", runs.size());
        Run run{s_.run_dir + name, buf.count};
        File file;
        SORTAPP_TRY(File::create(run.path, so_.direct_io, false, file));
        runs.push_back(run);
        SORTAPP_TRY(sort_and_write(so_, plan_, ring, buf, file, false, true, {}, sort_seconds));
        run_bytes += buf.count * s_.format.record_size;
        buf.count = 0;
        release_taken();
        return Status::ok();
    }

    uint64_t records = 0, from_others = 0, run_bytes = 0;
    double sort_seconds = 0;
    std::vector<Run> runs;
    RunBuffer buf;
    IoRing ring;  // after buf: gone first, with any write still in flight from it

  private:
    // The frame a batch landed in: its records start where the frame does.
    std::optional<uint64_t> frame_of(const river_batch_t &b) const {
        const auto *p = static_cast<const uint8_t *>(b.records);
        const uint64_t frame_bytes = frame_ * s_.format.record_size;
        if (p < buf.records.data()) return std::nullopt;
        const auto off = static_cast<uint64_t>(p - buf.records.data());
        if (off % frame_bytes != 0 || off / frame_bytes >= frames_) return std::nullopt;
        return off / frame_bytes;
    }

    // The frames got since the last run, free again (the lowest handed out first).
    void release_taken() {
        std::sort(taken_.begin(), taken_.end(), std::greater<>());
        free_.insert(free_.end(), taken_.begin(), taken_.end());
        taken_.clear();
    }

    const RiverSortSettings &s_;
    const SortOptions &so_;
    const MemoryPlan &plan_;
    uint64_t frame_, frames_, run_records_;
    std::vector<uint64_t> free_;   // free frames, the next to hand out last
    std::vector<uint64_t> taken_;  // frames whose batch was got since the last run
    std::jthread prefaulter_;      // last: stopped and joined before the buffer goes
};

// The gatherer's thread: every batch until every source has ended. After a failure of its
// own (a run that could not be written) it keeps taking and dropping batches, so that no
// source waits for it for good; the failure is reported once the flow has ended.
Status gather(river_t *river, Gatherer &g, int self) {
    Status status;
    for (;;) {
        river_batch_t b;
        int rc = river_get_batch(river, &b, -1);
        if (rc == RIVER_END) return status;
        if (rc != RIVER_OK) return river_failure(river, rc, "receiving");
        if (status) status = g.take(b, self);
        if (!status) g.drop(b);
        rc = river_release(river, &b);
        if (rc != RIVER_OK && status) status = river_failure(river, rc, "releasing a batch");
    }
}

// Reads the input a chunk at a time with deep asynchronous reads, putting each record into
// the river as soon as it has arrived, while the next reads are in flight.
Status send_input(river_t *river, const File &input, uint64_t records, const SortOptions &so,
                  uint64_t chunk_records, Picker &picker, const RiverProgress &progress) {
    const size_t rs = so.format.record_size;
    IoRing ring;
    SORTAPP_TRY(ring.init(so.io_depth));
    Buffer chunk(std::min(records, chunk_records) * rs + io_alignment);
    if (!chunk.valid()) return Status::error("river sort: cannot map the read buffer");
    picker.base = chunk.data();
    int rc = RIVER_OK;
    for (uint64_t first = 0; first < records; first += chunk_records) {
        const uint64_t count = std::min(chunk_records, records - first);
        picker.base_pos = first;
        uint64_t arrived = 0, put = 0;
        SORTAPP_TRY(read_sequential(
            ring, input, chunk.data(), first * rs, count * rs, so.io_size, [&](uint64_t n) {
                arrived += n;
                const uint64_t whole = std::min(count, arrived / rs);
                if (rc == RIVER_OK && whole > put)
                    rc = river_put_records(river, chunk.data() + put * rs, whole - put);
                put = whole;
                if (progress) progress("river", first * rs + arrived, records * rs);
            }));
        if (rc != RIVER_OK) return river_failure(river, rc, "sending");
    }
    return Status::ok();
}

}  // namespace

namespace {

SortOptions sort_options(const RiverSortSettings &s) {
    SortOptions so;
    so.format = s.format;
    so.memory_budget = s.memory_budget;
    so.scratch_dir = s.run_dir;
    return so;
}

// Record slots of the gatherer's buffer: what the budget leaves after the sources' batches,
// the read chunk and the write buffers, at record_size + two sort entries per slot. The
// batches arriving here land in the buffer itself (Gatherer::place).
Status plan_capacity(const RiverSortSettings &s, const SortOptions &so, MemoryPlan &plan,
                     uint64_t &slots) {
    SORTAPP_TRY(plan_memory(so, std::max<uint64_t>(1, s.expected_share), plan));
    plan.keep_last_run = false;  // the gatherer's buffer is all the memory: its runs all spill
    plan.kept_bytes = 0;
    const uint64_t rs = s.format.record_size, unit = records_per_io_unit(s.format);
    const uint64_t river = uint64_t{s.nodes} * (kCredits + 1) * s.batch_bytes;
    const uint64_t fixed = chunk_records(s) * rs + river +
                           uint64_t{plan.write_buffer} * plan.write_buffers + 4 * io_alignment;
    const uint64_t avail = s.memory_budget > fixed ? s.memory_budget - fixed : 0;
    slots = std::min<uint64_t>(avail / (rs + 2 * sizeof(SortEntry)), max_records_per_sort);
    // Two passes by request: runs of about a quarter of the partition (Gatherer's run_records_).
    if (s.passes == 2) slots = std::min(slots, slots_holding(s, s.expected_share / 4 + unit));
    const uint64_t frames = slots / frame_slots(s), needed = spare_frames(s, false) + 1;
    if (frames < needed)
        return Status::error("memory budget " + std::to_string(s.memory_budget) +
                             " bytes is too small for the river sort: " + std::to_string(fixed) +
                             " bytes go to the river's and the I/O buffers alone, and " +
                             std::to_string(needed * frame_slots(s) * rs) +
                             " more to the batches on their way");
    const uint64_t held = records_held(s, slots);
    if (s.passes == 1 && s.expected_share > held)
        return Status::error("one pass: this node's share of " + std::to_string(s.expected_share) +
                             " records does not fit the " + std::to_string(held) +
                             " its memory budget holds " +
                             "(use --passes 2 or auto, or a larger --memory)");
    return Status::ok();
}

river_options_t river_settings(const RiverSortSettings &s, Picker &picker, Gatherer &g,
                               std::vector<int> &ranks) {
    ranks.resize(s.nodes);
    for (uint32_t i = 0; i < s.nodes; ++i) ranks[i] = static_cast<int>(i);
    river_options_t ro;
    river_options_init(&ro);
    ro.record_size = s.format.record_size;
    ro.batch_size = s.batch_bytes;
    ro.credits = kCredits;
    ro.sources = ranks.data();
    ro.nsources = static_cast<int>(s.nodes);
    ro.sinks = ranks.data();
    ro.nsinks = static_cast<int>(s.nodes);
    ro.pick = pick_record;
    ro.pick_arg = &picker;
    ro.place = Gatherer::place;
    ro.place_arg = &g;
    ro.timeout_ms = s.stall_ms;
    return ro;
}

// Sends this node's input and gathers its partition: the river from open to close.
Status distribute(msg_context_t *msg, const RiverSortSettings &s, const SortOptions &so,
                  const File &input, uint64_t records, Gatherer &g, Picker &picker,
                  const RiverProgress &progress) {
    std::vector<int> ranks;
    river_options_t ro = river_settings(s, picker, g, ranks);
    river_t *river = nullptr;
    int rc = river_open(msg, &ro, &river);
    if (rc != RIVER_OK) return river_failure(nullptr, rc, "opening the river");
    Status gathered;
    std::thread gatherer([&] { gathered = gather(river, g, static_cast<int>(s.node)); });
    Status sent = send_input(river, input, records, so, chunk_records(s), picker, progress);
    // Ended even after a failure, so that every sink's flow ends and nobody waits for good;
    // the failure makes the job abort, and nothing of it is kept.
    int end_rc = river_end(river);
    gatherer.join();
    int close_rc = river_close(river);
    SORTAPP_TRY(sent);
    SORTAPP_TRY(gathered);
    if (end_rc != RIVER_OK) return river_failure(nullptr, end_rc, "ending the flow");
    if (close_rc != RIVER_OK) return river_failure(nullptr, close_rc, "closing the river");
    return Status::ok();
}

// The partition, sorted, into the output (one pass), or the last run and the merge of all.
Status write_output(const RiverSortSettings &s, const SortOptions &so, const MemoryPlan &plan,
                    Gatherer &g, RiverSortResult &r, const RiverProgress &progress) {
    PendingFile out;
    SORTAPP_TRY(out.create(s.output, so.direct_io, s.temp_tag));
    const uint64_t total = g.records * s.format.record_size;
    uint64_t done = 0;
    r.one_pass = g.runs.empty();
    if (r.one_pass) {
        if (g.buf.count > 0)
            SORTAPP_TRY(sort_and_write(
                so, plan, g.ring, g.buf, out.file, true, true,
                [&](uint64_t n) {
                    if (progress) progress("sort+write", done += n, total);
                },
                g.sort_seconds));
    } else {
        if (g.buf.count > 0) SORTAPP_TRY(g.spill());
        r.runs = g.runs.size();
        if (progress) progress("merge", 0, total);
        MergeReport report;
        SORTAPP_TRY(merge_runs(so, plan, g.runs, KeptRun{}, out.file, s.run_dir, report));
    }
    r.pending_output = out.keep();
    return Status::ok();
}

PhaseFigures figures(const char *phase, const Stopwatch &a, const Stopwatch &b) {
    PhaseFigures f;
    f.phase = phase;
    f.seconds = b.wall - a.wall;
    f.cpu_seconds = b.cpu - a.cpu;
    f.resource = "disk";
    return f;
}

}  // namespace

uint64_t river_batch_bytes(uint32_t nodes, uint64_t memory_budget) {
    uint64_t batch = 256u << 10;
    const uint64_t per_batch = uint64_t{std::max(nodes, 1u)} * (2 * kCredits + 1);
    while (memory_budget != 0 && batch > (16u << 10) && per_batch * batch > memory_budget / 4)
        batch /= 2;
    return batch;
}

Status river_sort(msg_context_t *msg, const RiverSortSettings &s, RiverSortResult &r,
                  const RiverProgress &progress) {
    r = RiverSortResult();
    SORTAPP_TRY(check_splitters(s.splitters, s.nodes, s.format.key_size));
    const SortOptions so = sort_options(s);
    const size_t rs = s.format.record_size;
    MemoryPlan plan;
    uint64_t capacity = 0;
    SORTAPP_TRY(plan_capacity(s, so, plan, capacity));
    File input;
    SORTAPP_TRY(File::open_read(s.input, records_per_io_unit(s.format) > 1, input));
    r.input_records = input.size() / rs;
    Partitioner part(s.splitters, s.format.key_size, s.node);
    Picker picker{&part, nullptr, 0, rs, std::vector<uint64_t>(s.nodes, 0)};
    Gatherer g(s, so, plan, capacity);
    SORTAPP_TRY(g.init());
    const Stopwatch t0 = Stopwatch::now();
    SORTAPP_TRY(distribute(msg, s, so, input, r.input_records, g, picker, progress));
    const Stopwatch t1 = Stopwatch::now();
    r.records = g.records;
    r.distribute = figures("river", t0, t1);
    r.distribute.bytes_read = r.input_records * rs;
    r.distribute.bytes_sent = (r.input_records - picker.per_sink[s.node]) * rs;
    r.distribute.bytes_received = g.from_others * rs;
    const uint64_t spilled = g.run_bytes;
    r.distribute.bytes_written = spilled;
    SORTAPP_TRY(write_output(s, so, plan, g, r, progress));
    r.finish = figures(r.one_pass ? "sort+write" : "merge", t1, Stopwatch::now());
    // Two passes: the merge also wrote the last run, and read every run.
    r.finish.bytes_written = r.records * rs + (g.run_bytes - spilled);
    r.finish.bytes_read = r.one_pass ? 0 : r.records * rs;
    return Status::ok();
}

}  // namespace sortapp::cluster
