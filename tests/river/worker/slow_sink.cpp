// Scenario "slow_sink" (3 ranks: sources 0 and 1, sink 2, 2 credits, 16
// records a batch). First the sink takes nothing: each source's river_try_put
// must take exactly (credits + 1) batches' worth and then refuse. Then the
// sink consumes slowly (it sleeps between batches: that is the load, not what
// is checked) while the sources put 40 more batches each with river_put. What
// is checked is the state the statistics report: no source ever had more than
// `credits` batches in flight nor held more than its bound of batch memory,
// it had to wait for credits, the sink never held more than nsources x
// credits batches, and every record arrived (count, sum and xor of hashes).
#include <chrono>
#include <thread>

#include "scenarios.hpp"

namespace rivertest {

namespace {

constexpr int kSlowCredits = 2;
constexpr size_t kSlowRecord = 64;
constexpr size_t kSlowPerBatch = 16;
constexpr uint64_t kMoreBatches = 40;

void source(worker::Job &job, river_t *r) {
    std::vector<uint8_t> rec(kSlowRecord);
    Checksum sent;
    uint64_t seq = 0;
    int rc;
    for (;;) {
        make_record(rec.data(), kSlowRecord, job.rank, seq);
        if ((rc = river_try_put(r, rec.data())) != RIVER_OK) break;
        sent.add(rec.data(), kSlowRecord);
        ++seq;
    }
    VSTATUS(rc, RIVER_ERR_WOULD_BLOCK);
    WCHECK(seq == (kSlowCredits + 1) * kSlowPerBatch,
           "try_put took %llu records before refusing, not %zu",
           static_cast<unsigned long long>(seq), (kSlowCredits + 1) * kSlowPerBatch);
    river_stats_t s;
    VSTATUS(river_get_stats(r, &s), RIVER_OK);
    WCHECK(
        s.batches_sent == kSlowCredits && s.peak_in_flight == kSlowCredits && s.credit_waits >= 1,
        "with the sink idle: %llu batches sent, %llu in flight, %llu credit waits",
        static_cast<unsigned long long>(s.batches_sent),
        static_cast<unsigned long long>(s.peak_in_flight),
        static_cast<unsigned long long>(s.credit_waits));
    WSTATUS(msg_send(job.ctx(), 2, kTagGo, nullptr, 0), MSG_OK);
    for (const uint64_t end = seq + kMoreBatches * kSlowPerBatch; seq < end; ++seq) {
        make_record(rec.data(), kSlowRecord, job.rank, seq);
        VSTATUS(river_put(r, rec.data()), RIVER_OK);
        sent.add(rec.data(), kSlowRecord);
    }
    VSTATUS(river_end(r), RIVER_OK);
    send_checksum(job.ctx(), 2, sent);
    VSTATUS(river_get_stats(r, &s), RIVER_OK);
    WCHECK(s.source_bytes_bound == (kSlowCredits + 1) * (kSlowPerBatch * kSlowRecord + 64),
           "source bound %llu", static_cast<unsigned long long>(s.source_bytes_bound));
    worker::say(
        "source: peak %llu batches in flight, peak %llu of %llu bytes held, %llu credit "
        "waits, %.3f s blocked",
        static_cast<unsigned long long>(s.peak_in_flight),
        static_cast<unsigned long long>(s.peak_source_bytes),
        static_cast<unsigned long long>(s.source_bytes_bound),
        static_cast<unsigned long long>(s.credit_waits), s.blocked_ns / 1e9);
}

void sink(worker::Job &job, river_t *r) {
    for (int source = 0; source < 2; ++source)
        WSTATUS(msg_recv(job.ctx(), source, kTagGo, nullptr, 0, nullptr), MSG_OK);
    Checksum got[2];
    river_batch_t b;
    int rc;
    while ((rc = river_get_batch(r, &b, -1)) == RIVER_OK) {
        WCHECK(b.source == 0 || b.source == 1, "batch from rank %d", b.source);
        for (size_t i = 0; i < b.count; ++i) {
            const auto *rec = static_cast<const uint8_t *>(b.records) + i * kSlowRecord;
            int source;
            uint64_t seq;
            const char *why = check_record(rec, kSlowRecord, &source, &seq);
            WCHECK(why == nullptr && source == b.source, "record damaged: %s",
                   why ? why : "source");
            got[b.source].add(rec, kSlowRecord);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the slow consumer
        VSTATUS(river_release(r, &b), RIVER_OK);
    }
    VSTATUS(rc, RIVER_END);
    for (int source = 0; source < 2; ++source) {
        const Checksum want = recv_checksum(job.ctx(), source);
        WCHECK(got[source] == want, "from rank %d: %llu records arrived, %llu sent", source,
               static_cast<unsigned long long>(got[source].count),
               static_cast<unsigned long long>(want.count));
    }
    river_stats_t s;
    VSTATUS(river_get_stats(r, &s), RIVER_OK);
    WCHECK(s.sink_bytes == 2 * kSlowCredits * kSlowPerBatch * kSlowRecord, "sink bytes %llu",
           static_cast<unsigned long long>(s.sink_bytes));
    worker::say("sink: peak %llu batches held, %llu received",
                static_cast<unsigned long long>(s.peak_sink_batches),
                static_cast<unsigned long long>(s.batches_received));
}

}  // namespace

void run_slow_sink(const Args &) {
    worker::Job job;
    WCHECK(job.size == 3, "slow_sink needs 3 ranks, not %d", job.size);
    const int sources[] = {0, 1}, sinks[] = {2};
    river_options_t o = options(kSlowRecord, kSlowPerBatch * kSlowRecord, kSlowCredits);
    o.sources = sources;
    o.nsources = 2;
    o.sinks = sinks;
    o.nsinks = 1;
    river_t *r = nullptr;
    VSTATUS(river_open(job.ctx(), &o, &r), RIVER_OK);
    if (job.rank == 2)
        sink(job, r);
    else
        source(job, r);
    check_bounds(r, kSlowCredits, 2);
    VSTATUS(river_close(r), RIVER_OK);
    job.finalize();
}

}  // namespace rivertest
