// The DataPump's sink: checks what the source announces (and that the output
// is not the input), gets batches from the river and writes each straight
// from the river's buffer at its offset, up to `credits` writes in flight
// (each holds its batch, and so the source's credit, until written), then
// flushes and renames the output into place.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "pump_files.hpp"
#include "pump_io.hpp"
#include "pump_timeline.hpp"
#include "viaduct/clock.hpp"
#include "viaduct/safe_file.hpp"

namespace pump {

namespace {

int copy_failed(river_t *r, int rc) {
    return pump::river_failed(r, rc, "the copy did not complete");
}

struct Writer {
    const Options &o;
    river_t *r;
    PendingOutput &out;
    std::unique_ptr<DiskIo> io;
    std::vector<IoRequest> reqs;
    std::vector<river_batch_t> batches;
    std::vector<size_t> free;
    uint64_t offset = 0;
    SinkProgress *progress = nullptr;
};

// Counts bytes written (or dropped) for the sampler, when there is one.
void count(SinkProgress *progress, uint64_t bytes) {
    if (progress != nullptr) progress->bytes.fetch_add(bytes, std::memory_order_relaxed);
}

// Waits for one write; releases its batch.
int finish_one(Writer &w) {
    IoRequest *q = w.io->wait();
    const auto i = reinterpret_cast<size_t>(q->user);
    const int rc = river_release(w.r, &w.batches[i]);
    w.free.push_back(i);
    if (q->error != 0)
        return fail("writing " + w.out.temp_path() + " at offset " + std::to_string(q->offset) +
                    ": " + std::strerror(q->error));
    if (rc != RIVER_OK) return copy_failed(w.r, rc);
    count(w.progress, q->done);
    return 0;
}

int submit(Writer &w, const river_batch_t &b) {
    std::string why;
    if (w.out.direct() && b.count % kDirectAlign != 0) {
        // The tail: O_DIRECT needs whole blocks. Nothing direct may still be in flight.
        while (w.free.size() < w.reqs.size())
            if (finish_one(w) != 0) return 1;
        if (!w.out.set_buffered(&why)) return fail(why);
    }
    const size_t i = w.free.back();
    w.free.pop_back();
    w.batches[i] = b;
    IoRequest &q = w.reqs[i];
    q.fd = w.out.fd();
    q.buf = const_cast<uint8_t *>(static_cast<const uint8_t *>(b.records));
    q.len = b.count;
    q.offset = w.offset;
    q.write = true;
    q.user = reinterpret_cast<void *>(i);
    w.offset += b.count;
    w.io->submit(&q);
    return 0;
}

int write_all(Writer &w) {
    const size_t depth = w.reqs.size();
    for (size_t i = 0; i < depth; ++i) w.free.push_back(depth - 1 - i);
    int status = 0;
    bool ended = false;
    while (status == 0 && !ended) {
        if (w.free.empty()) {
            status = finish_one(w);
            continue;
        }
        river_batch_t b;
        // Nothing to write: wait for the river. Writes in flight: just look.
        const int rc = river_get_batch(w.r, &b, w.free.size() == depth ? -1 : 0);
        if (rc == RIVER_OK)
            status = submit(w, b);
        else if (rc == RIVER_END)
            ended = true;
        else if (rc == RIVER_ERR_WOULD_BLOCK)
            status = finish_one(w);
        else
            status = copy_failed(w.r, rc);
    }
    // Every write ends before the river (which owns the buffers) can close.
    while (w.free.size() < depth) {
        const int s = finish_one(w);
        if (status == 0) status = s;
    }
    return status;
}

int drop_all(river_t *r, SinkProgress *progress) {
    river_batch_t b;
    int rc;
    while ((rc = river_get_batch(r, &b, -1)) == RIVER_OK) {
        count(progress, b.count);
        river_release(r, &b);
    }
    return rc == RIVER_END ? 0 : copy_failed(r, rc);
}

// Hears the source out and answers; 0 when the copy may start.
// VIADUCT_DATAPUMP_HOLD=PATH: with the temporary output created, write the
// pid to PATH and wait there until a signal stops the process (the tests
// stop a copy at this known point; no clock involved).
void hold_for_test() {
    const char *path = std::getenv("VIADUCT_DATAPUMP_HOLD");
    if (path == nullptr || *path == '\0') return;
    viaduct::write_file_atomically(path, std::to_string(getpid()) + "\n");
    for (;;) pause();
}

// `why`: a reason this end cannot take part, found before.
int agree(msg_context_t *ctx, const Options &o, Meta *m, PendingOutput *out, std::string why) {
    msg_completion_t c{};
    int rc = msg_recv(ctx, o.from, kTagHello, m, sizeof *m, &c);
    if (rc != MSG_OK) return fail(std::string("hearing from the source: ") + msg_strerror(rc));
    if (c.bytes != sizeof *m || m->magic != kMetaMagic)
        return fail("the source's first message is not a datapump's");
    m->boot_id[sizeof m->boot_id - 1] = '\0';
    m->message[sizeof m->message - 1] = '\0';
    if (m->status != 0)
        return fail("the source (rank " + std::to_string(o.from) + ") cannot start: " + m->message);
    if (why.empty() && !o.no_disk && (why = refuse_output(o.output, *m)).empty())
        if (out->create(o.output, m->mode, o.direct, &why)) out->reserve(m->size, &why);
    if (why.empty()) hold_for_test();
    Verdict v{};
    v.status = why.empty() ? 0 : 1;
    std::snprintf(v.message, sizeof v.message, "%s", why.c_str());
    rc = msg_send(ctx, o.from, kTagVerdict, &v, sizeof v);
    if (!why.empty()) return fail(why);
    if (rc != MSG_OK) return fail(std::string("answering the source: ") + msg_strerror(rc));
    return 0;
}

}  // namespace

int run_sink(msg_context_t *ctx, const Options &o, Figures *mine, Figures *source,
             SinkProgress *progress) {
    Meta m{};
    PendingOutput out;
    std::string why;
    std::unique_ptr<DiskIo> io;
    if (!o.no_disk) io = DiskIo::create(o.io, static_cast<unsigned>(o.credits), &why);
    if (why.empty() && !o.timeline.empty()) why = timeline_refusal(o.timeline);
    if (agree(ctx, o, &m, &out, why) != 0) return 1;
    const int from[] = {o.from}, to[] = {o.to};
    const river_options_t ro = river_options(o, from, to);
    river_t *r = nullptr;
    int rc = river_open(ctx, &ro, &r);
    if (rc != RIVER_OK) return copy_failed(nullptr, rc);
    const double t0 = viaduct::now_seconds(), c0 = cpu_seconds();
    std::snprintf(mine->io, sizeof mine->io, "%s", o.no_disk ? "none" : io->name());
    mine->direct = out.direct();
    set_phase(progress, "pumping");
    int status;
    if (o.no_disk) {
        status = drop_all(r, progress);
    } else {
        Writer w{o,
                 r,
                 out,
                 std::move(io),
                 std::vector<IoRequest>(static_cast<size_t>(o.credits)),
                 std::vector<river_batch_t>(static_cast<size_t>(o.credits)),
                 {},
                 0,
                 progress};
        status = write_all(w);
    }
    set_phase(progress, "committing");
    river_get_stats(r, &mine->river);
    rc = river_close(r);
    if (status == 0 && rc != RIVER_OK) status = copy_failed(nullptr, rc);
    mine->bytes = mine->river.bytes_got;
    if (status == 0 && mine->bytes != m.size)
        status = fail("the source sent " + std::to_string(mine->bytes) + " bytes of " +
                      std::to_string(m.size));
    if (status == 0 && !o.no_disk && !out.commit(&why)) status = fail(why);
    mine->seconds = viaduct::now_seconds() - t0;
    mine->cpu_seconds = cpu_seconds() - c0;
    if (status != 0) return status;
    msg_completion_t c{};
    rc = msg_recv(ctx, o.from, kTagFigures, source, sizeof *source, &c);
    if (rc != MSG_OK || c.bytes != sizeof *source)
        *source = Figures{};  // the copy is done all the same
    source->io[sizeof source->io - 1] = '\0';
    return 0;
}

}  // namespace pump
