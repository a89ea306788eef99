// Scenarios "killed_sink" and "killed_source" (4 ranks: sources 0 and 1,
// sinks 2 and 3, hash-partitioned, records put without end). One rank is
// killed mid-flow; every survivor must get a named error from put or get
// within a bound (a watchdog fails the rank otherwise), the river must name
// the rank or the consequence, and river_close must return in bounded time.
//
// killed_sink: sink 3 dies after 20 batches. Sources 0 and 1 get
// MSG_ERR_PEER_FAILED naming rank 3; they close (aborting their flow), so sink
// 2 gets RIVER_ERR_SOURCE_ABORTED.
// killed_source: source 1 dies after 20 batches' worth of records. Sinks 2 and
// 3 get MSG_ERR_PEER_FAILED naming rank 1; they close, so source 0 gets
// RIVER_ERR_SINK_CLOSED.
//
// The victim dies while it holds libmsg's fabric lock (from a completion
// callback), so no thread of it is inside a provider call. Dying inside one is
// another failure: libfabric's shm provider keeps its locks in shared memory,
// and a lock a killed process held stays taken; libmsg then reports the
// fabric stuck ("a fabric call has not returned", docs/libmsg.md) and its
// peers cannot go on through that region.
#include <signal.h>
#include <unistd.h>

#include "scenarios.hpp"

namespace rivertest {

namespace {

constexpr size_t kKilledRecord = 64;
constexpr size_t kBatch = 8192;
constexpr int kKilledCredits = 4;
constexpr uint64_t kBatchesBeforeDeath = 20;

river_t *open_river(worker::Job &job) {
    static const int sources[] = {0, 1}, sinks[] = {2, 3};
    static river_hash_t key{0, 8};
    river_options_t o = options(kKilledRecord, kBatch, kKilledCredits);
    o.sources = sources;
    o.nsources = 2;
    o.sinks = sinks;
    o.nsinks = 2;
    o.pick = river_pick_hash;
    o.pick_arg = &key;
    river_t *r = nullptr;
    VSTATUS(river_open(job.ctx(), &o, &r), RIVER_OK);
    // Every rank's open has returned before the victim can die.
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    return r;
}

constexpr int kTagDie = 103;

void die_now(void *, const msg_completion_t *) {
    raise(SIGKILL);
}

// SIGKILL from inside a completion callback, which libmsg calls with its
// fabric lock held: a message to itself completes there.
[[noreturn]] void die_holding_fabric(worker::Job &job) {
    msg_cq_t *cq = nullptr;
    WSTATUS(msg_cq_create_callback(job.ctx(), die_now, nullptr, &cq), MSG_OK);
    static char byte;
    WSTATUS(msg_irecv(job.ctx(), job.rank, kTagDie, &byte, 1, cq, nullptr), MSG_OK);
    WSTATUS(msg_isend(job.ctx(), job.rank, kTagDie, &byte, 1, cq, nullptr), MSG_OK);
    for (;;) pause();
}

// Puts until the river fails (or, for the victim, until `die_after` records).
int put_until_error(worker::Job &job, river_t *r, uint64_t die_after) {
    std::vector<uint8_t> rec(kKilledRecord);
    for (uint64_t seq = 0;; ++seq) {
        if (seq == die_after) {
            worker::say("dying after %llu records", static_cast<unsigned long long>(seq));
            die_holding_fabric(job);
        }
        make_record(rec.data(), kKilledRecord, job.rank, seq);
        int rc = river_put(r, rec.data());
        if (rc != RIVER_OK) return rc;
    }
}

// Gets until the river fails (or, for the victim, until `die_after` batches).
int get_until_error(worker::Job &job, river_t *r, uint64_t die_after) {
    river_batch_t b;
    for (uint64_t n = 0;; ++n) {
        if (n == die_after) {
            worker::say("dying after %llu batches", static_cast<unsigned long long>(n));
            die_holding_fabric(job);
        }
        int rc = river_get_batch(r, &b, -1);
        if (rc != RIVER_OK) return rc;
        for (size_t i = 0; i < b.count; ++i) {
            int source;
            uint64_t seq;
            const char *why =
                check_record(static_cast<const uint8_t *>(b.records) + i * kKilledRecord,
                             kKilledRecord, &source, &seq);
            WCHECK(why == nullptr, "record damaged: %s", why);
        }
        VSTATUS(river_release(r, &b), RIVER_OK);
    }
}

void expect_error(river_t *r, int rc, int want, int want_rank) {
    int rank = -2;
    char text[256];
    const int sticky = river_error(r, &rank, text, sizeof text);
    WCHECK(rc == want && sticky == want, "ended with %d (%s), river error %s; expected %s", rc,
           river_strerror(rc), describe_error(r).c_str(), river_strerror(want));
    WCHECK(want_rank < 0 ? rank >= 0 : rank == want_rank, "error names rank %d: %s", rank, text);
    worker::say("SURVIVOR saw: %s", describe_error(r).c_str());
}

// Survivors of one role meet before closing: a survivor's close is news to
// the other role, which must not reach the other survivor before the failure.
void survive(worker::Job &job, river_t *r, int rc, int want, int want_rank, int peer) {
    expect_error(r, rc, want, want_rank);
    if (peer >= 0) {
        WSTATUS(msg_send(job.ctx(), peer, kTagDone, nullptr, 0), MSG_OK);
        WSTATUS(msg_recv(job.ctx(), peer, kTagDone, nullptr, 0, nullptr), MSG_OK);
    }
    {
        worker::Watchdog dog(failure_bound_seconds(), "river_close after the failure");
        const int closed = river_close(r);
        WCHECK(closed == want, "river_close returned %d (%s)", closed, river_strerror(closed));
    }
    worker::say("SURVIVOR_OK");
}

}  // namespace

void run_killed_sink(const Args &) {
    worker::Job job;
    WCHECK(job.size == 4, "killed_sink needs 4 ranks, not %d", job.size);
    river_t *r = open_river(job);
    int rc;
    {
        worker::Watchdog dog(60.0 * worker::slowdown() + failure_bound_seconds(),
                             "the flow ending in an error after the sink's death");
        if (job.rank == 3) get_until_error(job, r, kBatchesBeforeDeath);
        rc = job.rank < 2 ? put_until_error(job, r, UINT64_MAX)
                          : get_until_error(job, r, UINT64_MAX);
    }
    if (job.rank < 2)
        survive(job, r, rc, MSG_ERR_PEER_FAILED, 3, 1 - job.rank);
    else
        survive(job, r, rc, RIVER_ERR_SOURCE_ABORTED, -1, -1);
    job.finalize_after_loss();
}

void run_killed_source(const Args &) {
    worker::Job job;
    WCHECK(job.size == 4, "killed_source needs 4 ranks, not %d", job.size);
    river_t *r = open_river(job);
    int rc;
    {
        worker::Watchdog dog(60.0 * worker::slowdown() + failure_bound_seconds(),
                             "the flow ending in an error after the source's death");
        const uint64_t victim_records = kBatchesBeforeDeath * (kBatch / kKilledRecord);
        if (job.rank == 1) put_until_error(job, r, victim_records);
        rc = job.rank == 0 ? put_until_error(job, r, UINT64_MAX)
                           : get_until_error(job, r, UINT64_MAX);
    }
    if (job.rank == 0)
        survive(job, r, rc, RIVER_ERR_SINK_CLOSED, -1, -1);
    else
        survive(job, r, rc, MSG_ERR_PEER_FAILED, 1, 5 - job.rank);
    job.finalize_after_loss();
}

}  // namespace rivertest
