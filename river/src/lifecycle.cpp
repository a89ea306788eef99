// A river's life: open (both ends greet each other), close (last words, then
// the receives withdrawn), and the callback through which every completion
// of its operations arrives.
#include "lifecycle.hpp"

#include <string>

#include "settings.hpp"

namespace riv {

namespace {

void on_completion(void *arg, const msg_completion_t *c) {
    river *r = static_cast<river *>(arg);
    const Op *op = static_cast<const Op *>(c->cookie);
    Core &core = r->core;
    std::lock_guard<std::mutex> lk(core.mu);
    core.in_flight.fetch_sub(1, std::memory_order_relaxed);
    core.last_progress = Clock::now();
    switch (op->kind) {
        case OpKind::BatchSend:
            r->source->on_batch_sent(*c, *op);
            break;
        case OpKind::SourceControlRecv:
            r->source->on_control(*c, *op);
            break;
        case OpKind::BatchRecv:
            r->sink->on_batch(*c, *op);
            break;
        case OpKind::SinkControlRecv:
            r->sink->on_control(*c, *op);
            break;
        case OpKind::ControlSend:
            // A dead peer shows through the receives posted for it.
            if (c->status != MSG_OK && c->status != MSG_ERR_PEER_FAILED)
                core.fail(c->status, c->source,
                          "sending to rank " + std::to_string(c->source) + ": " +
                              msg_strerror(c->status));
            break;
    }
    core.cv.notify_all();
}

bool has_deferred(const river *r) {
    return (r->source && r->source->has_deferred()) || (r->sink && r->sink->has_deferred());
}

// Sends what either end has put off, until done() holds (under mu) or no
// completion has come for timeout_ms: then RIVER_ERR_TIMEOUT. The bound holds
// also while something stays put off (sends that keep failing once the
// fabric is broken).
template <class Done>
int wait_for_peers(river *r, Done done) {
    Core &core = r->core;
    const auto quiet = std::chrono::milliseconds(core.settings.timeout_ms);
    for (;;) {
        if (r->source) r->source->send_deferred();
        if (r->sink) r->sink->send_deferred();
        std::unique_lock<std::mutex> lk(core.mu);
        if (done()) return RIVER_OK;
        const auto deadline = core.last_progress + quiet;
        if (Clock::now() >= deadline) return RIVER_ERR_TIMEOUT;
        if (has_deferred(r)) {  // still put off (the fabric refused it for now): soon again
            core.cv.wait_for(lk, std::chrono::milliseconds(1), done);
            continue;
        }
        core.cv.wait_until(lk, deadline, [&] { return done() || has_deferred(r); });
    }
}

// Withdraws the receives and waits (bounded) for every operation to finish;
// frees the river if they all did.
void release(std::unique_ptr<river> r) {
    Core &core = r->core;
    msg_cq_cancel_recvs(core.cq, nullptr);
    const auto deadline = Clock::now() + std::chrono::milliseconds(core.settings.timeout_ms);
    {
        std::unique_lock<std::mutex> lk(core.mu);
        core.cv.wait_until(lk, deadline, [&] { return core.in_flight.load() == 0; });
        if (core.in_flight.load() != 0) {
            // libmsg may still write into the river's buffers: never free them.
            lk.unlock();
            r.release();
            return;
        }
    }
    msg_cq_destroy(core.cq);
}

}  // namespace

int open_river(msg_context_t *msg, const river_options_t &options, river **out) {
    msg_info_t info;
    int rc = msg_get_info(msg, &info);
    if (rc != MSG_OK) return rc;
    Settings s;
    if ((rc = make_settings(options, info.rank, info.size, &s)) != RIVER_OK) return rc;
    auto r = std::make_unique<river>(msg, std::move(s));
    Core &core = r->core;
    if ((rc = msg_cq_create_callback(msg, on_completion, r.get(), &core.cq)) != MSG_OK) return rc;
    if (core.settings.layout.my_source >= 0) r->source = std::make_unique<Source>(core);
    if (core.settings.layout.my_sink >= 0) r->sink = std::make_unique<Sink>(core);
    if (r->sink) rc = r->sink->start();
    if (rc == RIVER_OK && r->source) rc = r->source->start();
    if (rc == RIVER_OK) {
        river *raw = r.get();
        rc = wait_for_peers(raw, [raw] {
            return raw->core.error() != 0 || ((!raw->source || raw->source->greeted()) &&
                                              (!raw->sink || raw->sink->greeted()));
        });
    }
    if (rc == RIVER_OK) rc = core.error();
    if (rc != RIVER_OK) {
        release(std::move(r));
        return rc;
    }
    *out = r.release();
    return RIVER_OK;
}

int close_river(std::unique_ptr<river> owned) {
    river *r = owned.get();
    if (r->source) r->source->begin_close();
    if (r->sink) r->sink->begin_close();
    int rc = wait_for_peers(r, [r] {
        return (!r->source || r->source->settled()) && (!r->sink || r->sink->settled());
    });
    const int error = r->core.error();
    release(std::move(owned));
    return error != 0 ? error : rc;
}

}  // namespace riv
