// Runs one collective's Schedule: posts a round's messages, takes their
// completions (delivered by the engine into the inbox, taken later by
// advance), runs the round's work, and reports once. On failure it leaves
// nothing behind that could write into the caller's buffers or keep a
// peer's send waiting: see fail().
#include "collective/collective.hpp"

namespace msg {

Collective::Collective(Host &host, int tag, std::unique_ptr<Schedule> schedule, Report report)
    : host_(host), tag_(tag), schedule_(std::move(schedule)), report_(report) {}

void Collective::reset(int tag, std::unique_ptr<Schedule> schedule, Report report) {
    tag_ = tag;
    schedule_ = std::move(schedule);
    report_ = report;
    inbox_.clear();
    inbox_head_ = 0;
    round_ = round_left_ = posted_ = 0;
    status_ = MSG_OK;
    round_open_ = reported_ = advancing_ = false;
    queued = false;
}

void Collective::deliver(const msg_completion_t &c) {
    // Called from inside the engine: only note it, advance() acts on it.
    inbox_.push_back(c);
    if (!queued && !advancing_) {
        queued = true;
        host_.ready.push_back(this);
    }
}

void Collective::take(const msg_completion_t &c) {
    auto *m = static_cast<CollMessage *>(c.cookie);
    --posted_;
    if (c.status == MSG_ERR_CANCELED && failed()) {
        m->state = CollMessage::Canceled;
        return;
    }
    m->state = CollMessage::Done;
    int status = c.status;
    // Every rank computes the same sizes; a shorter message is a caller's
    // mismatch (alltoallv's counts), as a longer one is.
    if (status == MSG_OK && !m->send && c.bytes != m->len) status = MSG_ERR_TRUNCATED;
    if (status != MSG_OK) {
        fail(status);
        return;
    }
    if (!failed()) --round_left_;
}

void Collective::drain_inbox() {
    // take() may fail the collective, which drains again: the head moves first.
    while (inbox_head_ < inbox_.size()) {
        const msg_completion_t c = inbox_[inbox_head_++];
        take(c);
    }
    inbox_.clear();
    inbox_head_ = 0;
}

void Collective::post(CollMessage &m) {
    m.state = CollMessage::Posted;
    ++posted_;
    Engine &e = *host_.engine;
    const int rc = m.send ? e.isend(m.peer, tag_, m.buf, m.len, this, &m)
                          : e.irecv(m.peer, tag_, m.buf, m.len, this, &m, true);
    if (rc == MSG_OK) return;
    --posted_;
    m.state = CollMessage::Done;
    fail(rc);
}

void Collective::post_round() {
    const Round &r = schedule_->round_at(round_);
    round_open_ = true;
    round_left_ = r.count;
    for (size_t i = r.first; i < r.first + r.count; ++i) {
        post(schedule_->message(i));
        if (failed()) return;
    }
}

bool Collective::advance() {
    advancing_ = true;
    // Finalize has completed every message in the engine: post no more.
    if (host_.closing) fail(MSG_ERR_FINALIZED);
    for (;;) {
        drain_inbox();
        if (failed() || round_left_ > 0) break;
        if (round_open_) {
            Round &r = schedule_->round_at(round_);
            if (r.then) r.then();
            ++round_;
            round_open_ = false;
        }
        if (round_ == schedule_->rounds()) break;
        post_round();
    }
    advancing_ = false;
    if (posted_ > 0 || inbox_head_ < inbox_.size()) return false;
    report(status_);
    return true;
}

void Collective::fail(int status) {
    if (failed()) return;
    status_ = status;
    if (host_.closing) return;
    // Receives no message has matched yet are withdrawn (they complete here
    // as canceled); those already taking data finish into our buffers, and
    // the caller hears of the failure only after that.
    host_.engine->cancel_recvs(this);
    drain_inbox();
    post_drains();
}

// A peer that has not yet learned of the failure may still send us what our
// schedule was to receive; its send must finish (a long one waits for a
// receive), so an empty receive on the drain sink takes each such message
// (truncated to nothing). Posted in schedule order, they match in the order
// the peer sends. Those never sent stay posted until finalize, harmlessly.
void Collective::post_drains() {
    Engine &e = *host_.engine;
    for (size_t i = 0; i < schedule_->messages(); ++i) {
        CollMessage &m = schedule_->message(i);
        if (m.send || (m.state != CollMessage::Idle && m.state != CollMessage::Canceled)) continue;
        m.state = CollMessage::Done;
        if (e.peer_failed(m.peer)) continue;
        (void)e.irecv(m.peer, tag_, nullptr, 0, host_.drain, nullptr, true);
    }
}

void Collective::report(int status) {
    if (reported_ || report_.sink == nullptr) return;
    reported_ = true;
    msg_completion_t c{};
    c.op = MSG_OP_COLLECTIVE;
    c.status = status;
    c.source = report_.source;
    c.tag = 0;
    c.bytes = status == MSG_OK ? report_.bytes : 0;
    c.cookie = report_.cookie;
    c.data = report_.seq;
    report_.sink->deliver(c);
}

}  // namespace msg
