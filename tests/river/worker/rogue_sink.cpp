// Scenario "rogue_sink" (2 ranks): rank 0 is a river's only source, rank 1 a
// rogue that speaks the river's wire format by hand as its only sink. Each
// kind of bad control message (on a river of its own tags) must reach the
// putting source as the named error in bounded time: the source puts until
// put fails (it runs out of credits first, the rogue granting none), and
// river_close returns the same error.
#include <cstring>
#include <iterator>

#include "scenarios.hpp"
#include "wire.hpp"

namespace rivertest {

namespace {

using riv::Control;
using riv::ControlKind;

constexpr size_t kSinkRecord = 16;
constexpr size_t kSinkPerBatch = 64;
constexpr int kSinkCredits = 2;

Control grant(uint32_t credits) {
    Control c = riv::make_control(ControlKind::Grant, 0);
    c.credits = credits;
    return c;
}

struct SinkVariant {
    const char *name;
    int expect;
    bool at_open;
    Control (*message)(const Control &hello);  // what the rogue sends after its hello
};

const SinkVariant kSinkVariants[] = {
    {"a grant of more credits than batches in flight", RIVER_ERR_PROTOCOL, false,
     [](const Control &) { return grant(1000); }},
    {"a grant of no credit", RIVER_ERR_PROTOCOL, false, [](const Control &) { return grant(0); }},
    {"finished before the flow ended", RIVER_ERR_PROTOCOL, false,
     [](const Control &) { return riv::make_control(ControlKind::Finished, 0); }},
    {"a source's kind of message", RIVER_ERR_PROTOCOL, false,
     [](const Control &) { return riv::make_control(ControlKind::End, 0); }},
    {"closed before the flow ended", RIVER_ERR_SINK_CLOSED, false,
     [](const Control &) { return riv::make_control(ControlKind::Closed, 0); }},
    {"a hello granting other credits", RIVER_ERR_MISMATCH, true, nullptr},
};

void play_rogue(worker::Job &job, int tag, const SinkVariant &v) {
    // The source's batches land in receives of the rogue's own.
    worker::Cq cq(job.ctx());
    std::vector<std::vector<uint8_t>> slots(kSinkCredits,
                                            std::vector<uint8_t>(kSinkPerBatch * kSinkRecord + 64));
    for (auto &s : slots)
        WSTATUS(
            msg_irecv(job.ctx(), 0, tag + riv::kTagBatch, s.data(), s.size(), cq.get(), nullptr),
            MSG_OK);
    Control hello{};
    msg_completion_t c{};
    WSTATUS(msg_recv(job.ctx(), 0, tag + riv::kTagToSink, &hello, sizeof hello, &c), MSG_OK);
    WCHECK(c.bytes == sizeof hello && hello.kind == static_cast<uint16_t>(ControlKind::Hello),
           "the source's first message is not a hello");
    Control mine = hello;  // source index 0 = sink index 0, the same settings
    if (v.at_open) mine.credits = kSinkCredits + 1;
    WSTATUS(msg_send(job.ctx(), 0, tag + riv::kTagToSource, &mine, sizeof mine), MSG_OK);
    if (v.message != nullptr) {
        // Only once the source's river_open has returned, so put is what sees it.
        WSTATUS(msg_recv(job.ctx(), 0, kTagGo, nullptr, 0, nullptr), MSG_OK);
        const Control m = v.message(hello);
        WSTATUS(msg_send(job.ctx(), 0, tag + riv::kTagToSource, &m, sizeof m), MSG_OK);
    }
    WSTATUS(msg_recv(job.ctx(), 0, kTagDone, nullptr, 0, nullptr), MSG_OK);
    size_t canceled = 0;
    WSTATUS(msg_cq_cancel_recvs(cq.get(), &canceled), MSG_OK);
    for (int i = 0; i < kSinkCredits; ++i)
        worker::wait_completion(cq.get(), "the rogue's receives");
    cq.destroy();
}

void play_source(worker::Job &job, int tag, const SinkVariant &v) {
    const int sources[] = {0}, sinks[] = {1};
    river_options_t o = options(kSinkRecord, kSinkPerBatch * kSinkRecord, kSinkCredits);
    o.sources = sources;
    o.nsources = 1;
    o.sinks = sinks;
    o.nsinks = 1;
    o.tag = tag;
    river_t *r = nullptr;
    worker::Watchdog dog(failure_bound_seconds() + 30.0 * worker::slowdown(), v.name);
    int rc = river_open(job.ctx(), &o, &r);
    if (!v.at_open) {
        VSTATUS(rc, RIVER_OK);
        WSTATUS(msg_send(job.ctx(), 1, kTagGo, nullptr, 0), MSG_OK);
        std::vector<uint8_t> rec(kSinkRecord);
        for (uint64_t seq = 0; rc == RIVER_OK; ++seq) {
            std::memcpy(rec.data(), &seq, sizeof seq);
            rc = river_put(r, rec.data());
        }
    }
    WCHECK(rc == v.expect, "%s: %d (%s), expected %s", v.name, rc, river_strerror(rc),
           river_strerror(v.expect));
    if (!v.at_open) {
        river_stats_t s;
        VSTATUS(river_get_stats(r, &s), RIVER_OK);
        const uint64_t bad = v.expect == RIVER_ERR_PROTOCOL ? 1 : 0;
        WCHECK(s.bad_messages == bad, "%s: %llu rejected", v.name,
               static_cast<unsigned long long>(s.bad_messages));
        int rank = -1;
        char text[256];
        VSTATUS(river_error(r, &rank, text, sizeof text), v.expect);
        WCHECK(rank == 1 && text[0] != '\0', "%s: error names rank %d: '%s'", v.name, rank, text);
        worker::say("%s: %s", v.name, text);
        VSTATUS(river_close(r), v.expect);
    }
    WSTATUS(msg_send(job.ctx(), 1, kTagDone, nullptr, 0), MSG_OK);
}

}  // namespace

void run_rogue_sink(const Args &) {
    worker::Job job;
    WCHECK(job.size == 2, "rogue_sink needs 2 ranks, not %d", job.size);
    for (size_t i = 0; i < std::size(kSinkVariants); ++i) {
        const int tag = RIVER_TAG_DEFAULT + 0x100 + 4 * static_cast<int>(i);
        if (job.rank == 0)
            play_source(job, tag, kSinkVariants[i]);
        else
            play_rogue(job, tag, kSinkVariants[i]);
    }
    job.finalize();
}

}  // namespace rivertest
