// The source end: filling batches, sending them against the sinks' credits,
// ending or aborting the flow, and what the sinks tell it.
#include "source.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace riv {

namespace {

std::string sink_name(int rank) {
    return "sink rank " + std::to_string(rank);
}

}  // namespace

Source::Source(Core &core) : core_(core), st_(core.settings), links_(st_.layout.sinks.size()) {
    const int pool = st_.credits + 1, rx = st_.credits + 2;
    for (size_t i = 0; i < links_.size(); ++i) {
        Link &l = links_[i];
        l.rank = st_.layout.sinks[i];
        l.pool = std::make_unique<OutBatch[]>(static_cast<size_t>(pool));
        for (int k = 0; k < pool; ++k) l.pool[k].op = Op{OpKind::BatchSend, int(i), k};
        l.rx = std::make_unique<Control[]>(static_cast<size_t>(rx));
        l.rx_op = std::make_unique<Op[]>(static_cast<size_t>(rx));
        for (int k = 0; k < rx; ++k) l.rx_op[k] = Op{OpKind::SourceControlRecv, int(i), k};
    }
    hello_ = make_hello(st_, static_cast<uint32_t>(st_.layout.my_source));
}

int Source::start() {
    // Hello, a grant per batch in flight, and the last word: never more unread at once.
    const int rx = st_.credits + 2;
    for (Link &l : links_)
        for (int k = 0; k < rx; ++k) {
            int rc = core_.irecv(l.rank, kTagToSource, &l.rx[k], sizeof(Control), &l.rx_op[k]);
            if (rc != MSG_OK) return rc;
        }
    for (Link &l : links_) {
        int rc = core_.isend(l.rank, kTagToSink, &hello_, sizeof hello_, &core_.control_send);
        if (rc != MSG_OK) return rc;
    }
    return RIVER_OK;
}

bool Source::greeted() const {
    return std::all_of(links_.begin(), links_.end(), [](const Link &l) { return l.hello; });
}

// ---- putting ----

int Source::put(const void *record, bool may_block) {
    std::lock_guard<std::mutex> lk(put_mu_);
    if (ended_) return RIVER_ERR_ENDED;
    if (int e = core_.error()) return e;
    const int n = static_cast<int>(links_.size());
    const int sink = st_.pick(st_.pick_arg, record, st_.record_size, n);
    if (sink < 0 || sink >= n) return RIVER_ERR_PICK;
    return append(links_[static_cast<size_t>(sink)], static_cast<const uint8_t *>(record), 1,
                  may_block);
}

int Source::put_records(const uint8_t *records, size_t count) {
    std::lock_guard<std::mutex> lk(put_mu_);
    if (ended_) return RIVER_ERR_ENDED;
    if (int e = core_.error()) return e;
    const int n = static_cast<int>(links_.size());
    const size_t rs = st_.record_size, br = st_.batch_records;
    int rc = RIVER_OK;
    size_t copied = 0;  // records taken here rather than by append
    for (size_t i = 0; i < count; ++i) {
        const uint8_t *rec = records + i * rs;
        const int sink = st_.pick(st_.pick_arg, rec, rs, n);
        if (sink < 0 || sink >= n) {
            rc = RIVER_ERR_PICK;
            break;
        }
        Link &l = links_[static_cast<size_t>(sink)];
        // The common case: room in the batch being filled, and not its last (which ships).
        if (OutBatch *b = l.filling; b != nullptr && b->count + 1 < br) {
            std::memcpy(b->mem.get() + b->count * rs, rec, rs);
            ++b->count;
            ++copied;
            continue;
        }
        if ((rc = append(l, rec, 1, true)) != RIVER_OK) break;
    }
    records_put_.fetch_add(copied, std::memory_order_relaxed);
    return rc;
}

int Source::put_to(int sink, const uint8_t *records, size_t count) {
    std::lock_guard<std::mutex> lk(put_mu_);
    if (sink < 0 || sink >= static_cast<int>(links_.size())) return MSG_ERR_INVALID_ARG;
    if (ended_) return RIVER_ERR_ENDED;
    if (int e = core_.error()) return e;
    return append(links_[static_cast<size_t>(sink)], records, count, true);
}

int Source::append(Link &l, const uint8_t *records, size_t n, bool may_block) {
    const size_t rs = st_.record_size, br = st_.batch_records;
    size_t taken = 0;
    int rc = RIVER_OK;
    while (taken < n) {
        if (l.filling == nullptr || l.filling->count == br) {
            if ((rc = advance(l, Need::Room, may_block)) != RIVER_OK) break;
        }
        OutBatch &b = *l.filling;
        const size_t k = std::min(n - taken, br - b.count);
        std::memcpy(b.mem.get() + b.count * rs, records + taken * rs, k * rs);
        b.count += k;
        taken += k;
        // A full batch leaves at once when a credit is there: sending overlaps putting.
        if (b.count == br && (rc = advance(l, Need::ShipIfCredit, false)) != RIVER_OK) break;
    }
    records_put_.fetch_add(taken, std::memory_order_relaxed);
    // A sink that closed asked for this source's count of batches: tell it now.
    if (rc != RIVER_OK && rc != RIVER_ERR_WOULD_BLOCK) send_deferred();
    return rc;
}

// Ships the batch being filled when `need` says so and a credit allows, and
// (for Room) finds a buffer to fill, waiting when may_block.
int Source::advance(Link &l, Need need, bool may_block) {
    for (;;) {
        OutBatch *full = nullptr;
        int rc;
        {
            std::unique_lock<std::mutex> lk(core_.mu);
            rc = await(lk, l, need, may_block, &full);
        }
        if (rc != RIVER_OK || full == nullptr) return rc;
        if ((rc = ship(l, full)) != RIVER_OK) return rc;
        if (need != Need::Room) return RIVER_OK;
    }
}

int Source::await(std::unique_lock<std::mutex> &lk, Link &l, Need need, bool may_block,
                  OutBatch **full) {
    Clock::time_point since{};
    bool blocked = false;
    int rc = RIVER_OK;
    for (;;) {
        if ((rc = core_.error()) != RIVER_OK) break;
        const size_t count = l.filling != nullptr ? l.filling->count : 0;
        const bool due = need == Need::Flush ? count > 0 : count == st_.batch_records;
        if (due) {
            if (take_credit(l, full) || need == Need::ShipIfCredit) break;
        } else if (need != Need::Room) {
            break;  // nothing to send
        } else if (l.filling != nullptr || (l.filling = free_batch(l)) != nullptr) {
            break;  // room to fill
        }
        if (!blocked) {
            blocked = true;
            since = Clock::now();
            ++core_.counters.s.credit_waits;
        }
        if (!may_block) {
            rc = RIVER_ERR_WOULD_BLOCK;
            break;
        }
        core_.cv.wait(lk);
    }
    if (blocked) core_.counters.s.blocked_ns += ns_since(since);
    return rc;
}

bool Source::take_credit(Link &l, OutBatch **full) {
    if (l.credits == 0) return false;
    --l.credits;
    ++l.unreturned;
    OutBatch *b = l.filling;
    l.filling = nullptr;
    BatchTrailer t{};
    t.magic = kBatchMagic;
    t.version = kVersion;
    t.source_index = static_cast<uint32_t>(st_.layout.my_source);
    t.sink_index = static_cast<uint32_t>(&l - links_.data());
    t.seq = l.seq++;
    t.record_count = b->count;
    t.record_size = st_.record_size;
    std::memcpy(b->mem.get() + b->count * st_.record_size, &t, sizeof t);
    l.records += b->count;
    river_stats_t &s = core_.counters.s;
    ++s.batches_sent;
    s.peak_in_flight = std::max<uint64_t>(s.peak_in_flight, static_cast<uint64_t>(l.unreturned));
    *full = b;
    return true;
}

Source::OutBatch *Source::free_batch(Link &l) {
    // A buffer used before if there is one: memory grows only as far as the flow needs.
    OutBatch *pick = nullptr;
    for (int k = 0; k <= st_.credits; ++k) {
        OutBatch &b = l.pool[k];
        if (b.busy) continue;
        if (b.mem) {
            pick = &b;
            break;
        }
        if (pick == nullptr) pick = &b;
    }
    if (pick == nullptr) return nullptr;
    if (!pick->mem) pick->mem = std::make_unique_for_overwrite<uint8_t[]>(st_.slot_bytes);
    pick->busy = true;
    pick->count = 0;
    Counters &c = core_.counters;
    c.source_bytes_now += st_.slot_bytes;
    c.s.peak_source_bytes = std::max(c.s.peak_source_bytes, c.source_bytes_now);
    return pick;
}

int Source::ship(Link &l, OutBatch *b) {
    // Receives for control messages go back up first: the grant for this batch finds one.
    send_deferred();
    const size_t len = b->count * st_.record_size + sizeof(BatchTrailer);
    int rc = core_.isend(l.rank, kTagBatch, b->mem.get(), len, &b->op);
    if (rc == MSG_OK) return RIVER_OK;
    std::lock_guard<std::mutex> lk(core_.mu);
    b->busy = false;
    core_.counters.source_bytes_now -= st_.slot_bytes;
    if (rc == MSG_ERR_PEER_FAILED)
        link_failed(l);
    else
        core_.fail(rc, l.rank, "sending a batch to " + sink_name(l.rank) + ": " + msg_strerror(rc));
    return core_.error();
}

// ---- ending ----

int Source::flush() {
    std::lock_guard<std::mutex> lk(put_mu_);
    if (ended_) return RIVER_ERR_ENDED;
    return flush_locked();
}

int Source::flush_locked() {
    for (Link &l : links_) {
        int rc = advance(l, Need::Flush, true);
        if (rc != RIVER_OK) {
            send_deferred();
            return rc;
        }
    }
    return RIVER_OK;
}

int Source::end() {
    std::lock_guard<std::mutex> lk(put_mu_);
    if (ended_) return RIVER_ERR_ENDED;
    int rc = flush_locked();
    if (rc != RIVER_OK) return rc;
    for (Link &l : links_) send_last(l, ControlKind::End);
    ended_ = true;
    return core_.error();
}

bool Source::send_last(Link &l, ControlKind kind) {
    {
        std::lock_guard<std::mutex> lk(core_.mu);
        if (l.abort_due) {
            l.abort_due = false;
            --deferred_;
        }
        if (l.failed || l.end_sent || l.abort_sent || l.finished) return false;
        l.last_msg = make_control(kind, static_cast<uint32_t>(st_.layout.my_source));
        l.last_msg.batches = l.seq;
        l.last_msg.records = l.records;
        (kind == ControlKind::End ? l.end_sent : l.abort_sent) = true;
    }
    int rc = core_.isend(l.rank, kTagToSink, &l.last_msg, sizeof(Control), &core_.control_send);
    if (rc == MSG_OK) return true;
    std::lock_guard<std::mutex> lk(core_.mu);
    if (rc == MSG_ERR_PEER_FAILED)
        link_failed(l);
    else
        core_.fail(rc, l.rank,
                   "telling " + sink_name(l.rank) + " the flow ended: " + msg_strerror(rc));
    return false;
}

void Source::begin_close() {
    send_deferred();
    if (!ended_)
        for (Link &l : links_) send_last(l, ControlKind::Abort);
    ended_ = true;
}

bool Source::settled() const {
    return std::all_of(links_.begin(), links_.end(), [](const Link &l) {
        return l.failed || l.finished || (l.closed && (l.end_sent || l.abort_sent));
    });
}

bool Source::has_deferred() const {
    return deferred_ > 0;
}

void Source::send_deferred() {
    std::unique_lock<std::mutex> lk(core_.mu);
    for (Link &l : links_) {
        if (deferred_ == 0) return;
        while (!l.repost.empty() && !l.failed) {
            const int k = l.repost.back();
            l.repost.pop_back();
            --deferred_;
            lk.unlock();
            int rc = core_.irecv(l.rank, kTagToSource, &l.rx[k], sizeof(Control), &l.rx_op[k]);
            lk.lock();
            if (rc == MSG_ERR_PEER_FAILED)
                link_failed(l);
            else if (rc != MSG_OK)
                core_.fail(rc, l.rank, "receiving from " + sink_name(l.rank));
        }
        if (l.abort_due) {
            lk.unlock();
            send_last(l, ControlKind::Abort);
            lk.lock();
        }
    }
}

// ---- completions (under mu) ----

void Source::link_failed(Link &l) {
    l.failed = true;
    if (!l.finished && !l.closed)
        core_.fail(MSG_ERR_PEER_FAILED, l.rank, sink_name(l.rank) + " failed");
    if (!l.repost.empty()) {
        deferred_ -= static_cast<int>(l.repost.size());
        l.repost.clear();
    }
    if (l.abort_due) {
        l.abort_due = false;
        --deferred_;
    }
}

// A sink that broke the protocol is treated as failed: nothing more is sent
// to it or waited for.
void Source::reject(Link &l, int status, std::string text) {
    core_.fail(status, l.rank, std::move(text));
    link_failed(l);
}

void Source::on_batch_sent(const msg_completion_t &c, const Op &op) {
    Link &l = links_[static_cast<size_t>(op.link)];
    l.pool[op.slot].busy = false;
    core_.counters.source_bytes_now -= st_.slot_bytes;
    if (c.status == MSG_OK) return;
    if (c.status == MSG_ERR_PEER_FAILED) return link_failed(l);
    core_.fail(c.status, l.rank,
               "sending a batch to " + sink_name(l.rank) + ": " + msg_strerror(c.status));
}

void Source::on_control(const msg_completion_t &c, const Op &op) {
    Link &l = links_[static_cast<size_t>(op.link)];
    const char *why = nullptr;
    if (!core_.take_control(
            c, l.rx[op.slot], static_cast<uint32_t>(op.link), true, l.rank, sink_name(l.rank),
            [&] { link_failed(l); }, [&](const Control &m) { return apply(l, m); }, &why))
        return;
    if (why != nullptr) {
        ++core_.counters.s.bad_messages;
        return reject(l, RIVER_ERR_PROTOCOL,
                      "control message from " + sink_name(l.rank) + ": " + why);
    }
    if (!l.finished && !l.closed && !l.failed) {
        l.repost.push_back(op.slot);
        ++deferred_;
    }
}

const char *Source::apply(Link &l, const Control &m) {
    switch (static_cast<ControlKind>(m.kind)) {
        case ControlKind::Hello:
            if (l.hello) return "a second hello";
            if (const char *what = hello_differs(st_, m)) {
                reject(l, RIVER_ERR_MISMATCH,
                       sink_name(l.rank) + " opened the river with another " + what);
                return nullptr;
            }
            l.hello = true;
            l.credits = st_.credits;
            return nullptr;
        case ControlKind::Grant:
            if (!l.hello || l.finished || l.closed) return "a grant out of turn";
            if (m.credits == 0) return "grants no credit";
            if (m.credits > static_cast<uint32_t>(l.unreturned))
                return "grants more credits than batches in flight";
            l.unreturned -= static_cast<int>(m.credits);
            l.credits += static_cast<int>(m.credits);
            return nullptr;
        case ControlKind::Finished:
            if (l.finished || l.closed || !(l.end_sent || l.abort_sent))
                return "finished before the flow ended";
            if (m.batches != l.seq || (l.end_sent && m.records != l.records))
                return "counts other batches or records than were sent";
            l.finished = true;
            return nullptr;
        case ControlKind::Closed:
            if (l.finished || l.closed) return "closed after its last word";
            l.closed = true;
            if (!l.end_sent && !l.abort_sent) {
                l.abort_due = true;
                ++deferred_;
            }
            if (!l.abort_sent)
                core_.fail(RIVER_ERR_SINK_CLOSED, l.rank,
                           sink_name(l.rank) + " closed the river before the flow ended");
            return nullptr;
        default:
            return "unknown kind";
    }
}

}  // namespace riv
