// The sink end: slots posted per source, batches checked on arrival and
// handed out in each source's order, credits granted back on release, and
// the answer to each source's last word.
#include "sink.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace riv {

namespace {

constexpr size_t kAlign = 4096;

std::string source_name(int rank) {
    return "source rank " + std::to_string(rank);
}

}  // namespace

Sink::Sink(Core &core) : core_(core), st_(core.settings), links_(st_.layout.sources.size()) {
    const size_t credits = static_cast<size_t>(st_.credits);
    const size_t stride = (st_.slot_bytes + kAlign - 1) / kAlign * kAlign;
    // With sink-provided memory every batch lands where st_.place says (start, release).
    if (st_.place == nullptr)
        memory_.reset(
            static_cast<uint8_t *>(std::aligned_alloc(kAlign, stride * credits * links_.size())));
    const uint32_t me = static_cast<uint32_t>(st_.layout.my_sink);
    for (size_t i = 0; i < links_.size(); ++i) {
        Link &l = links_[i];
        l.rank = st_.layout.sources[i];
        l.slots.resize(credits);
        for (size_t k = 0; k < credits; ++k) {
            Slot &s = l.slots[k];
            if (memory_) s.mem = memory_.get() + (i * credits + k) * stride;
            s.op = Op{OpKind::BatchRecv, static_cast<int>(i), static_cast<int>(k)};
        }
        for (int k = 0; k < 2; ++k)
            l.rx_op[k] = Op{OpKind::SinkControlRecv, static_cast<int>(i), k};
    }
    hello_ = make_hello(st_, me);
    grant_ = make_control(ControlKind::Grant, me);
    grant_.credits = 1;
    core_.counters.s.sink_bytes = links_.size() * credits * st_.batch_bytes;
}

// Where the next batch from the source of link `li` lands: the application's memory when it
// provides it (null if it has none), else the slot's own.
uint8_t *Sink::placement(size_t li, Slot &s) const {
    if (st_.place == nullptr) return s.mem;
    return static_cast<uint8_t *>(st_.place(st_.place_arg, static_cast<int>(li), st_.slot_bytes));
}

int Sink::start() {
    if (st_.place == nullptr && !memory_) return MSG_ERR_NO_MEMORY;
    for (size_t li = 0; li < links_.size(); ++li) {
        Link &l = links_[li];
        for (Slot &s : l.slots) {
            if ((s.mem = placement(li, s)) == nullptr) return MSG_ERR_NO_MEMORY;
            s.state = SlotState::Posted;
            int rc = core_.irecv(l.rank, kTagBatch, s.mem, st_.slot_bytes, &s.op);
            if (rc != MSG_OK) return rc;
        }
        for (int k = 0; k < 2; ++k) {
            int rc = core_.irecv(l.rank, kTagToSink, &l.rx[k], sizeof(Control), &l.rx_op[k]);
            if (rc != MSG_OK) return rc;
        }
    }
    // Every slot is posted before the hello grants the credits that fill them.
    for (Link &l : links_) {
        int rc = core_.isend(l.rank, kTagToSource, &hello_, sizeof hello_, &core_.control_send);
        if (rc != MSG_OK) return rc;
    }
    return RIVER_OK;
}

bool Sink::greeted() const {
    return std::all_of(links_.begin(), links_.end(), [](const Link &l) { return l.hello; });
}

// ---- getting ----

int Sink::get_batch(river_batch_t *batch, int timeout_ms) {
    std::lock_guard<std::mutex> lk(get_mu_);
    if (have_cursor_) {
        // What river_get has not taken of its batch comes first.
        *batch = cursor_;
        batch->records =
            static_cast<const uint8_t *>(cursor_.records) + cursor_pos_ * st_.record_size;
        batch->count = cursor_.count - cursor_pos_;
        have_cursor_ = false;
        return RIVER_OK;
    }
    return get_batch_locked(batch, timeout_ms);
}

int Sink::get(void *record) {
    std::lock_guard<std::mutex> lk(get_mu_);
    if (!have_cursor_) {
        int rc = get_batch_locked(&cursor_, -1);
        if (rc != RIVER_OK) return rc;
        have_cursor_ = true;
        cursor_pos_ = 0;
    }
    const size_t rs = st_.record_size;
    std::memcpy(record, static_cast<const uint8_t *>(cursor_.records) + cursor_pos_ * rs, rs);
    if (++cursor_pos_ == cursor_.count) {
        have_cursor_ = false;
        std::lock_guard<std::mutex> sl(send_mu_);
        return release_locked(&cursor_);
    }
    return RIVER_OK;
}

int Sink::get_batch_locked(river_batch_t *batch, int timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    for (;;) {
        send_deferred();
        std::unique_lock<std::mutex> lk(core_.mu);
        if (int e = core_.error()) return e;
        if (take(batch)) return RIVER_OK;
        if (finish_due_ > 0) continue;
        if (all_drained()) return RIVER_END;
        if (timeout_ms == 0) return RIVER_ERR_WOULD_BLOCK;
        auto woken = [this] {
            return core_.error() != 0 || finish_due_ > 0 || any_deliverable() || all_drained();
        };
        if (timeout_ms < 0)
            core_.cv.wait(lk, woken);
        else if (!core_.cv.wait_until(lk, deadline, woken))
            return RIVER_ERR_WOULD_BLOCK;
    }
}

Sink::Slot *Sink::deliverable(Link &l) {
    if (l.ready == 0) return nullptr;
    for (Slot &s : l.slots)
        if (s.state == SlotState::Ready && s.seq == l.next) return &s;
    return nullptr;
}

bool Sink::any_deliverable() {
    return std::any_of(links_.begin(), links_.end(),
                       [this](Link &l) { return deliverable(l) != nullptr; });
}

bool Sink::all_drained() const {
    return std::all_of(links_.begin(), links_.end(), [this](const Link &l) { return drained(l); });
}

// Under mu: hands out the next batch, taking the sources in turn.
bool Sink::take(river_batch_t *batch) {
    const size_t n = links_.size();
    for (size_t i = 0; i < n; ++i) {
        const size_t li = (turn_ + i) % n;
        Link &l = links_[li];
        Slot *s = deliverable(l);
        if (s == nullptr) continue;
        s->state = SlotState::Held;
        --l.ready;
        ++l.held;
        ++l.next;
        batch->records = s->mem;
        batch->count = s->count;
        batch->source = l.rank;
        batch->slot = (static_cast<uint64_t>(li) << 32) | static_cast<uint64_t>(s - l.slots.data());
        river_stats_t &st = core_.counters.s;
        st.records_got += s->count;
        st.bytes_got += s->count * st_.record_size;
        turn_ = (li + 1) % n;
        return true;
    }
    return false;
}

int Sink::release(river_batch_t *batch) {
    std::lock_guard<std::mutex> sl(send_mu_);
    return release_locked(batch);
}

// With send_mu held: the slot goes back up and its credit back to the source,
// unless the source has said its last word.
int Sink::release_locked(river_batch_t *batch) {
    const uint64_t li = batch->slot >> 32, si = batch->slot & 0xffffffffu;
    Link *l = nullptr;
    Slot *s = nullptr;
    bool repost = false;
    {
        std::lock_guard<std::mutex> lk(core_.mu);
        if (li >= links_.size() || si >= links_[li].slots.size()) return MSG_ERR_INVALID_ARG;
        l = &links_[li];
        s = &l->slots[si];
        const auto *p = static_cast<const uint8_t *>(batch->records);
        if (s->state != SlotState::Held || p < s->mem || p > s->mem + s->count * st_.record_size)
            return MSG_ERR_INVALID_ARG;
        --l->held;
        --core_.counters.sink_batches_now;
        repost = !l->last && !l->failed && !l->answered && core_.error() == 0;
        s->state = repost ? SlotState::Posted : SlotState::Idle;
    }
    batch->records = nullptr;
    batch->count = 0;
    if (!repost) return RIVER_OK;
    // Only this thread (send_mu) touches a Posted slot's memory before its receive is posted.
    if ((s->mem = placement(li, *s)) == nullptr) {
        std::lock_guard<std::mutex> lk(core_.mu);
        s->state = SlotState::Idle;
        core_.fail(MSG_ERR_NO_MEMORY, -1,
                   "no memory placed for the next batch from " + source_name(l->rank));
        return core_.error();
    }
    int rc = core_.irecv(l->rank, kTagBatch, s->mem, st_.slot_bytes, &s->op);
    const bool posted = rc == MSG_OK;
    if (posted)
        rc = core_.isend(l->rank, kTagToSource, &grant_, sizeof grant_, &core_.control_send);
    if (rc == MSG_OK) return RIVER_OK;
    std::lock_guard<std::mutex> lk(core_.mu);
    if (!posted) s->state = SlotState::Idle;
    if (rc == MSG_ERR_PEER_FAILED) {
        // The batch is released all the same; the source's failure is the next get's news.
        link_failed(*l);
        return RIVER_OK;
    }
    core_.fail(rc, l->rank,
               "granting a credit to " + source_name(l->rank) + ": " + msg_strerror(rc));
    return core_.error();
}

// ---- the last words ----

// With send_mu held, not mu.
void Sink::answer(Link &l, ControlKind kind) {
    {
        std::lock_guard<std::mutex> lk(core_.mu);
        if (l.finish_due) {
            l.finish_due = false;
            --finish_due_;
        }
        if (l.failed || l.answered) return;
        l.answered = true;
        l.closed_sent = kind == ControlKind::Closed;
        l.answer = make_control(kind, static_cast<uint32_t>(st_.layout.my_sink));
        l.answer.batches = l.arrived;
        l.answer.records = l.records_arrived;
    }
    int rc = core_.isend(l.rank, kTagToSource, &l.answer, sizeof(Control), &core_.control_send);
    if (rc == MSG_OK) return;
    std::lock_guard<std::mutex> lk(core_.mu);
    if (rc == MSG_ERR_PEER_FAILED)
        link_failed(l);
    else
        core_.fail(rc, l.rank, "answering " + source_name(l.rank) + ": " + msg_strerror(rc));
}

bool Sink::has_deferred() const {
    return finish_due_ > 0;
}

void Sink::send_deferred() {
    {
        std::lock_guard<std::mutex> lk(core_.mu);
        if (finish_due_ == 0) return;
    }
    std::lock_guard<std::mutex> sl(send_mu_);
    for (Link &l : links_) {
        bool due;
        {
            std::lock_guard<std::mutex> lk(core_.mu);
            due = l.finish_due;
        }
        if (due) answer(l, ControlKind::Finished);
    }
}

void Sink::begin_close() {
    send_deferred();
    std::lock_guard<std::mutex> sl(send_mu_);
    for (Link &l : links_) {
        bool ask;
        {
            // A source that has said its last word only needs its batches to arrive.
            std::lock_guard<std::mutex> lk(core_.mu);
            ask = !l.failed && !l.answered && !l.last;
        }
        if (ask) answer(l, ControlKind::Closed);
    }
}

bool Sink::settled() const {
    return std::all_of(links_.begin(), links_.end(),
                       [this](const Link &l) { return l.failed || (complete(l) && l.answered); });
}

// ---- completions (under mu) ----

void Sink::link_failed(Link &l) {
    l.failed = true;
    if (l.finish_due) {
        l.finish_due = false;
        --finish_due_;
    }
    if (!complete(l)) core_.fail(MSG_ERR_PEER_FAILED, l.rank, source_name(l.rank) + " failed");
}

// A source that broke the protocol is treated as failed: nothing more is
// taken from it, granted to it, or waited for.
void Sink::reject(Link &l, int status, std::string text) {
    l.failed = true;
    if (l.finish_due) {
        l.finish_due = false;
        --finish_due_;
    }
    core_.fail(status, l.rank, std::move(text));
}

void Sink::on_batch(const msg_completion_t &c, const Op &op) {
    Link &l = links_[static_cast<size_t>(op.link)];
    Slot &s = l.slots[static_cast<size_t>(op.slot)];
    s.state = SlotState::Idle;
    if (c.status == MSG_ERR_CANCELED) return;
    if (c.status == MSG_ERR_PEER_FAILED) return link_failed(l);
    BatchTrailer t{};
    const char *why = nullptr;
    if (c.status == MSG_ERR_TRUNCATED) {
        why = "longer than a batch";
    } else if (c.status != MSG_OK) {
        return core_.fail(
            c.status, l.rank,
            "receiving a batch from " + source_name(l.rank) + ": " + msg_strerror(c.status));
    } else {
        why = check_batch(s.mem, c.bytes, st_.record_size, st_.batch_records,
                          static_cast<uint32_t>(op.link), static_cast<uint32_t>(st_.layout.my_sink),
                          &t);
        if (why == nullptr) why = check_seq(l, t.seq);
    }
    if (why != nullptr) {
        ++core_.counters.s.bad_batches;
        return reject(l, RIVER_ERR_BAD_BATCH, "batch from " + source_name(l.rank) + ": " + why);
    }
    s.state = SlotState::Ready;
    s.seq = t.seq;
    s.count = static_cast<size_t>(t.record_count);
    ++l.arrived;
    l.records_arrived += s.count;
    ++l.ready;
    Counters &k = core_.counters;
    ++k.s.batches_received;
    k.s.peak_sink_batches = std::max(k.s.peak_sink_batches, ++k.sink_batches_now);
    check_complete(l);
}

const char *Sink::check_seq(const Link &l, uint64_t seq) const {
    if (seq < l.next) return "repeats a batch already handed out";
    if (l.last && seq >= l.announced) return "comes after the source's last batch";
    if (seq >= l.next + static_cast<uint64_t>(st_.credits - l.held)) return "sent without a credit";
    for (const Slot &s : l.slots)
        if (s.state == SlotState::Ready && s.seq == seq) return "repeats a batch that arrived";
    return nullptr;
}

void Sink::on_control(const msg_completion_t &c, const Op &op) {
    Link &l = links_[static_cast<size_t>(op.link)];
    const char *why = nullptr;
    if (!core_.take_control(
            c, l.rx[op.slot], static_cast<uint32_t>(op.link), false, l.rank, source_name(l.rank),
            [&] { link_failed(l); }, [&](const Control &m) { return apply(l, m); }, &why))
        return;
    if (why != nullptr) {
        ++core_.counters.s.bad_messages;
        reject(l, RIVER_ERR_PROTOCOL, "control message from " + source_name(l.rank) + ": " + why);
    }
}

const char *Sink::apply(Link &l, const Control &m) {
    const auto kind = static_cast<ControlKind>(m.kind);
    if (kind == ControlKind::Hello) {
        if (l.hello) return "a second hello";
        if (const char *what = hello_differs(st_, m)) {
            reject(l, RIVER_ERR_MISMATCH,
                   source_name(l.rank) + " opened the river with another " + what);
            return nullptr;
        }
        l.hello = true;
        return nullptr;
    }
    if (!l.hello || l.last) return "an end out of turn";
    // What is still on its way fits in the slots not holding a batch.
    const uint64_t room = static_cast<uint64_t>(st_.credits - l.held - l.ready);
    if (m.batches < l.arrived || m.batches - l.arrived > room)
        return "announces a batch count it cannot have sent";
    for (const Slot &s : l.slots)
        if (s.state == SlotState::Ready && s.seq >= m.batches)
            return "announces fewer batches than arrived";
    l.last = true;
    l.announced = m.batches;
    l.announced_records = m.records;
    if (kind == ControlKind::Abort) {
        l.aborted = true;
        if (!l.closed_sent)
            core_.fail(RIVER_ERR_SOURCE_ABORTED, l.rank,
                       source_name(l.rank) + " closed the river without ending its flow");
    }
    check_complete(l);
    return nullptr;
}

// Called when a batch or the last word arrives: the flow from l is complete
// once the last word has come and every batch it announced.
void Sink::check_complete(Link &l) {
    if (!complete(l)) return;
    if (!l.aborted && l.records_arrived != l.announced_records) {
        ++core_.counters.s.bad_messages;
        return reject(l, RIVER_ERR_PROTOCOL,
                      source_name(l.rank) + " announced " + std::to_string(l.announced_records) +
                          " records, " + std::to_string(l.records_arrived) + " arrived");
    }
    if (l.answered || l.finish_due) return;
    l.finish_due = true;
    ++finish_due_;
}

}  // namespace riv
