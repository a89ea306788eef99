// Scenario "flow LAYOUT PICK RECORD BATCH RECORDS": every source puts RECORDS
// self-checking records (by river_put, river_put_records and river_try_put in
// turn) and ends; every sink gets until RIVER_END (by river_get on even sink
// indexes, river_get_batch on odd ones) and checks each record: whole, at the
// sink its pick function names, in its source's order. Each source then sends
// each sink the count, sum and xor of the hashes of what it put there, which
// must equal what arrived. LAYOUT: "all" (every rank both), "split" (the
// first half sources, the rest sinks) or "overlap" (ranks 0..n-2 sources,
// 1..n-1 sinks) or "pair" (rank 0 the source, the last rank the sink, the others
// neither: their handle does nothing). A rank that is not a source may not
// put, one that is not a sink may not get. PICK: range (even splitters), hash
// or own (the application's).
#include <cstring>
#include <thread>

#include "scenarios.hpp"

namespace rivertest {

namespace {

constexpr int kFlowCredits = 3;

void make_layout(const std::string &layout, int size, std::vector<int> *sources,
                 std::vector<int> *sinks) {
    for (int r = 0; r < size; ++r) {
        const bool src = layout == "all" || (layout == "split" && r < (size + 1) / 2) ||
                         (layout == "overlap" && r < size - 1) || (layout == "pair" && r == 0);
        const bool snk = layout == "all" || (layout == "split" && r >= (size + 1) / 2) ||
                         (layout == "overlap" && r >= 1) || (layout == "pair" && r == size - 1);
        if (src) sources->push_back(r);
        if (snk) sinks->push_back(r);
    }
    WCHECK(!sources->empty() && !sinks->empty(), "layout '%s' on %d ranks", layout.c_str(), size);
}

// The application's own pick-stream: by sequence number, not by key.
int pick_by_seq(void *, const void *record, size_t, int nsinks) {
    uint64_t seq;
    std::memcpy(&seq, static_cast<const uint8_t *>(record) + 12, 8);
    return static_cast<int>(seq % static_cast<uint64_t>(nsinks));
}

struct Flow {
    river_options_t o{};
    river_range_t range{};
    river_hash_t hash{0, 8};
    std::vector<uint8_t> splitters;
    std::vector<int> sources, sinks;
    size_t records = 0;
};

void choose_pick(Flow &f, const std::string &pick, msg_context_t *ctx) {
    const int nsinks = static_cast<int>(f.sinks.size());
    if (pick == "range") {
        f.splitters = even_splitters(nsinks);
        f.range = river_range_t{f.splitters.data(), 0, 8};
        f.o.pick = river_pick_range;
        f.o.pick_arg = &f.range;
        if (nsinks >= 3) {
            // Splitters out of order are refused at open.
            std::vector<uint8_t> swapped(f.splitters);
            std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 8);
            river_range_t bad{swapped.data(), 0, 8};
            river_options_t o = f.o;
            o.pick_arg = &bad;
            river_t *r = nullptr;
            VSTATUS(river_open(ctx, &o, &r), MSG_ERR_INVALID_ARG);
        }
    } else if (pick == "hash") {
        f.o.pick = river_pick_hash;
        f.o.pick_arg = &f.hash;
    } else {
        WCHECK(pick == "own", "unknown pick '%s'", pick.c_str());
        f.o.pick = pick_by_seq;
    }
}

// The putting thread: records in runs of 64 by each way of putting.
void put_all(river_t *r, const Flow &f, int rank, std::vector<Checksum> *sent, int *status) {
    const size_t rs = f.o.record_size;
    const int nsinks = static_cast<int>(f.sinks.size());
    std::vector<uint8_t> run(64 * rs);
    uint64_t would_block = 0;
    for (uint64_t first = 0; first < f.records && *status == RIVER_OK; first += 64) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(64, f.records - first));
        for (size_t i = 0; i < n; ++i) {
            uint8_t *rec = run.data() + i * rs;
            make_record(rec, rs, rank, first + i);
            (*sent)[static_cast<size_t>(f.o.pick(f.o.pick_arg, rec, rs, nsinks))].add(rec, rs);
        }
        const uint64_t way = (first / 64) % 3;
        if (way == 1) {
            *status = river_put_records(r, run.data(), n);
            continue;
        }
        for (size_t i = 0; i < n && *status == RIVER_OK; ++i) {
            const uint8_t *rec = run.data() + i * rs;
            *status = way == 0 ? river_put(r, rec) : river_try_put(r, rec);
            if (*status == RIVER_ERR_WOULD_BLOCK) {
                ++would_block;
                *status = river_put(r, rec);
            }
        }
    }
    if (*status == RIVER_OK) *status = river_end(r);
    worker::say("put %llu records (%llu would have blocked)",
                static_cast<unsigned long long>(f.records),
                static_cast<unsigned long long>(would_block));
}

// Checks one arrived record and counts it for its source.
void take(const uint8_t *rec, const Flow &f, int me, std::vector<Checksum> *got,
          std::vector<int64_t> *last_seq, int size) {
    const size_t rs = f.o.record_size;
    int source;
    uint64_t seq;
    const char *why = check_record(rec, rs, &source, &seq);
    WCHECK(why == nullptr, "record from rank %d seq %llu: %s", source,
           static_cast<unsigned long long>(seq), why);
    WCHECK(source >= 0 && source < size, "record names rank %d", source);
    const int want = f.o.pick(f.o.pick_arg, rec, rs, static_cast<int>(f.sinks.size()));
    WCHECK(want == me, "record of rank %d seq %llu belongs to sink %d, arrived at sink %d", source,
           static_cast<unsigned long long>(seq), want, me);
    int64_t &last = (*last_seq)[static_cast<size_t>(source)];
    WCHECK(static_cast<int64_t>(seq) > last, "rank %d's seq %llu after %lld: out of order", source,
           static_cast<unsigned long long>(seq), static_cast<long long>(last));
    last = static_cast<int64_t>(seq);
    (*got)[static_cast<size_t>(source)].add(rec, rs);
}

void get_all(river_t *r, const Flow &f, int me, std::vector<Checksum> *got, int size) {
    std::vector<int64_t> last_seq(static_cast<size_t>(size), -1);
    std::vector<uint8_t> rec(f.o.record_size);
    int rc;
    if (me % 2 == 0) {
        while ((rc = river_get(r, rec.data())) == RIVER_OK)
            take(rec.data(), f, me, got, &last_seq, size);
    } else {
        river_batch_t b;
        while ((rc = river_get_batch(r, &b, -1)) == RIVER_OK) {
            WCHECK(reinterpret_cast<uintptr_t>(b.records) % 4096 == 0, "batch not page-aligned");
            for (size_t i = 0; i < b.count; ++i)
                take(static_cast<const uint8_t *>(b.records) + i * f.o.record_size, f, me, got,
                     &last_seq, size);
            VSTATUS(river_release(r, &b), RIVER_OK);
        }
    }
    WCHECK(rc == RIVER_END, "get ended with %d: %s", rc, describe_error(r).c_str());
}

}  // namespace

void run_flow(const Args &args) {
    WCHECK(args.size() == 5, "flow LAYOUT PICK RECORD BATCH RECORDS");
    worker::Job job;
    worker::check_info_matches_environment(job.info);
    Flow f;
    make_layout(args[0], job.size, &f.sources, &f.sinks);
    f.o = options(worker::parse_size_arg(args, 2, 100), worker::parse_size_arg(args, 3, 16384),
                  kFlowCredits);
    WCHECK(f.o.record_size >= kMinRecord, "records of at least %zu bytes", kMinRecord);
    f.o.sources = f.sources.data();
    f.o.nsources = static_cast<int>(f.sources.size());
    f.o.sinks = f.sinks.data();
    f.o.nsinks = static_cast<int>(f.sinks.size());
    f.records = worker::scaled(worker::parse_size_arg(args, 4, 20000), 1000);
    choose_pick(f, args[1], job.ctx());

    river_t *r = nullptr;
    VSTATUS(river_open(job.ctx(), &f.o, &r), RIVER_OK);
    int src = -1, snk = -1;
    VSTATUS(river_role(r, &src, &snk), RIVER_OK);
    std::vector<uint8_t> probe(f.o.record_size);
    if (src < 0) VSTATUS(river_put(r, probe.data()), RIVER_ERR_NOT_SOURCE);
    if (src < 0) VSTATUS(river_end(r), RIVER_ERR_NOT_SOURCE);
    if (snk < 0) VSTATUS(river_get(r, probe.data()), RIVER_ERR_NOT_SINK);
    std::vector<Checksum> sent(f.sinks.size()), got(static_cast<size_t>(job.size));
    int put_status = RIVER_OK;
    std::thread putter;
    if (src >= 0) putter = std::thread(put_all, r, std::cref(f), job.rank, &sent, &put_status);
    if (snk >= 0) get_all(r, f, snk, &got, job.size);
    if (putter.joinable()) putter.join();
    VSTATUS(put_status, RIVER_OK);
    if (src >= 0)
        for (size_t i = 0; i < f.sinks.size(); ++i) send_checksum(job.ctx(), f.sinks[i], sent[i]);
    uint64_t total = 0;
    if (snk >= 0)
        for (int source : f.sources) {
            const Checksum want = recv_checksum(job.ctx(), source);
            const Checksum &have = got[static_cast<size_t>(source)];
            WCHECK(have == want,
                   "from rank %d: %llu records arrived, %llu sent (or their hashes differ)", source,
                   static_cast<unsigned long long>(have.count),
                   static_cast<unsigned long long>(want.count));
            total += have.count;
        }
    river_stats_t s;
    VSTATUS(river_get_stats(r, &s), RIVER_OK);
    WCHECK(src < 0 || s.records_put == f.records, "records_put %llu",
           static_cast<unsigned long long>(s.records_put));
    WCHECK(s.records_got == total && s.bytes_got == total * f.o.record_size,
           "records_got %llu of %llu", static_cast<unsigned long long>(s.records_got),
           static_cast<unsigned long long>(total));
    WCHECK(s.bad_batches == 0 && s.bad_messages == 0, "rejected messages in a clean flow");
    check_bounds(r, kFlowCredits, f.sources.size());
    worker::say("flow: %llu records got, %llu batches sent, %llu credit waits",
                static_cast<unsigned long long>(total),
                static_cast<unsigned long long>(s.batches_sent),
                static_cast<unsigned long long>(s.credit_waits));
    VSTATUS(river_close(r), RIVER_OK);
    job.finalize();
}

}  // namespace rivertest
