// Scenario "rogue_source" (2 ranks): rank 0 is a river's only sink, rank 1 a
// rogue that speaks the river's wire format by hand through libmsg as its
// only source. For each kind of malformed batch or control message (each on
// a river of its own tags) the sink must reject it with the named error:
// river_open or river_get_batch returns it, the statistics count the
// rejected message, river_error names rank 1, and river_close returns the
// same error in bounded time.
#include <cstring>
#include <iterator>

#include "scenarios.hpp"
#include "wire.hpp"

namespace rivertest {

namespace {

using riv::BatchTrailer;
using riv::Control;
using riv::ControlKind;

constexpr size_t kSourceRecord = 16;
constexpr size_t kSourcePerBatch = 64;
constexpr int kSourceCredits = 2;

struct Rogue {
    msg_context_t *ctx;
    int tag;
    Control hello;  // the sink's, echoed back as the source's
};

void send_batch(Rogue &g, uint64_t seq, size_t payload_records, void (*edit)(BatchTrailer &)) {
    std::vector<uint8_t> msg(payload_records * kSourceRecord + sizeof(BatchTrailer), 0x5a);
    BatchTrailer t{};
    t.magic = riv::kBatchMagic;
    t.version = riv::kVersion;
    t.seq = seq;
    t.record_count = payload_records;
    t.record_size = kSourceRecord;
    if (edit != nullptr) edit(t);
    std::memcpy(msg.data() + payload_records * kSourceRecord, &t, sizeof t);
    WSTATUS(msg_send(g.ctx, 0, g.tag + riv::kTagBatch, msg.data(), msg.size()), MSG_OK);
}

void send_control(Rogue &g, const Control &c, size_t len = sizeof(Control)) {
    WSTATUS(msg_send(g.ctx, 0, g.tag + riv::kTagToSink, &c, len), MSG_OK);
}

Control end_of(uint64_t batches, uint64_t records) {
    Control c = riv::make_control(ControlKind::End, 0);
    c.batches = batches;
    c.records = records;
    return c;
}

struct SourceVariant {
    const char *name;
    int expect;    // the sink's error
    bool at_open;  // river_open returns it (a bad hello)
    void (*act)(Rogue &);
};

const SourceVariant kSourceVariants[] = {
    {"length other than the record count", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, 0, 3, [](BatchTrailer &t) { t.record_count = 2; }); }},
    {"no records", RIVER_ERR_BAD_BATCH, false, [](Rogue &g) { send_batch(g, 0, 0, nullptr); }},
    {"longer than a batch", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, 0, kSourcePerBatch + 2, nullptr); }},
    {"names another source", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, 0, 1, [](BatchTrailer &t) { t.source_index = 1; }); }},
    {"addressed to another sink", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, 0, 1, [](BatchTrailer &t) { t.sink_index = 3; }); }},
    {"another record size", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, 0, 2, [](BatchTrailer &t) { t.record_size = 8; }); }},
    {"bad magic", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, 0, 1, [](BatchTrailer &t) { t.magic = 0x1234; }); }},
    {"reserved field set", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, 0, 1, [](BatchTrailer &t) { t.reserved[1] = 1; }); }},
    {"shorter than a trailer", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) {
         uint8_t bytes[10] = {};
         WSTATUS(msg_send(g.ctx, 0, g.tag + riv::kTagBatch, bytes, sizeof bytes), MSG_OK);
     }},
    {"sent without a credit", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) { send_batch(g, kSourceCredits, 1, nullptr); }},
    {"a batch twice", RIVER_ERR_BAD_BATCH, false,
     [](Rogue &g) {
         send_batch(g, 0, 1, nullptr);
         send_batch(g, 0, 1, nullptr);
     }},
    {"an end counting other records", RIVER_ERR_PROTOCOL, false,
     [](Rogue &g) {
         send_batch(g, 0, 3, nullptr);
         send_control(g, end_of(1, 4));
     }},
    {"an end announcing batches it could not send", RIVER_ERR_PROTOCOL, false,
     [](Rogue &g) { send_control(g, end_of(kSourceCredits + 3, 0)); }},
    {"a second hello", RIVER_ERR_PROTOCOL, false, [](Rogue &g) { send_control(g, g.hello); }},
    {"a short control message", RIVER_ERR_PROTOCOL, false,
     [](Rogue &g) { send_control(g, end_of(0, 0), 32); }},
    {"a sink's kind of message", RIVER_ERR_PROTOCOL, false,
     [](Rogue &g) { send_control(g, riv::make_control(ControlKind::Grant, 0)); }},
    {"a hello with another record size", RIVER_ERR_MISMATCH, true, nullptr},
    {"a hello naming another source", RIVER_ERR_PROTOCOL, true, nullptr},
};

void play_rogue(worker::Job &job, int tag, const SourceVariant &v, size_t index) {
    Rogue g{job.ctx(), tag, {}};
    msg_completion_t c{};
    WSTATUS(msg_recv(g.ctx, 0, tag + riv::kTagToSource, &g.hello, sizeof g.hello, &c), MSG_OK);
    WCHECK(c.bytes == sizeof(Control) && g.hello.kind == static_cast<uint16_t>(ControlKind::Hello),
           "the sink's first message is not a hello");
    Control mine = g.hello;  // sink index 0 = source index 0, the same settings
    if (index == std::size(kSourceVariants) - 2) mine.record_size = 32;
    if (index == std::size(kSourceVariants) - 1) mine.from_index = 1;
    send_control(g, mine);
    if (v.act != nullptr) {
        // Only once the sink's river_open has returned, so get is what sees it.
        WSTATUS(msg_recv(g.ctx, 0, kTagGo, nullptr, 0, nullptr), MSG_OK);
        v.act(g);
    }
    WSTATUS(msg_recv(g.ctx, 0, kTagDone, nullptr, 0, nullptr), MSG_OK);
}

void play_sink(worker::Job &job, int tag, const SourceVariant &v) {
    const int sources[] = {1}, sinks[] = {0};
    river_options_t o = options(kSourceRecord, kSourcePerBatch * kSourceRecord, kSourceCredits);
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
        river_batch_t b;
        while ((rc = river_get_batch(r, &b, -1)) == RIVER_OK)
            VSTATUS(river_release(r, &b), RIVER_OK);
    }
    WCHECK(rc == v.expect, "%s: %d (%s), expected %s", v.name, rc, river_strerror(rc),
           river_strerror(v.expect));
    if (!v.at_open) {
        river_stats_t s;
        VSTATUS(river_get_stats(r, &s), RIVER_OK);
        const uint64_t counted = v.expect == RIVER_ERR_BAD_BATCH ? s.bad_batches : s.bad_messages;
        WCHECK(counted == 1, "%s: %llu rejected, not 1", v.name,
               static_cast<unsigned long long>(counted));
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

void run_rogue_source(const Args &) {
    worker::Job job;
    WCHECK(job.size == 2, "rogue_source needs 2 ranks, not %d", job.size);
    for (size_t i = 0; i < std::size(kSourceVariants); ++i) {
        const int tag = RIVER_TAG_DEFAULT + 4 * static_cast<int>(i);
        if (job.rank == 0)
            play_sink(job, tag, kSourceVariants[i]);
        else
            play_rogue(job, tag, kSourceVariants[i], i);
    }
    job.finalize();
}

}  // namespace rivertest
