// Engine core: requests, matching, eager messages, credit flow control,
// packet queues and peer failure. Long messages live in long_message.cpp.
#include "protocol/engine.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.hpp"
#include "protocol/engine_types.hpp"

namespace msg {

namespace {
constexpr int kTxSlab = 256;

// Packets that open a message: the receiver may have to hold them.
bool opens_message(PacketType t) {
    return t == PacketType::Eager || t == PacketType::Rts;
}
}  // namespace

const char *validate_header(const WireHeader &h, size_t bytes, int size, int self) {
    if (bytes < sizeof(WireHeader)) return "packet shorter than a header";
    if (h.magic != kWireMagic) return "bad magic";
    if (h.version != kWireVersion) return "unsupported protocol version";
    auto t = static_cast<uint8_t>(h.type);
    if (t < static_cast<uint8_t>(PacketType::Hello) || t > static_cast<uint8_t>(PacketType::Credit))
        return "unknown packet type";
    if (h.src >= static_cast<uint32_t>(size) || h.src == static_cast<uint32_t>(self))
        return "source rank out of range";
    size_t plen = bytes - sizeof(WireHeader);
    switch (h.type) {
        case PacketType::Eager:
            if (h.tag < 0) return "negative tag";
            if (plen != h.len) return "eager length does not match the packet";
            break;
        case PacketType::Chunk:
            if (plen == 0 || plen != h.len) return "chunk length does not match the packet";
            break;
        case PacketType::Rts:
            if (h.tag < 0) return "negative tag";
            if (plen != 0) return "unexpected payload";
            break;
        default:
            if (plen != 0) return "unexpected payload";
    }
    // One protocol per packet: a read offer or a write offer, never both.
    switch (h.type) {
        case PacketType::Rts:
            if (h.flags != 0 && h.flags != kFlagRdma && h.flags != kFlagRdmaWrite)
                return "unknown flags";
            break;
        case PacketType::Cts:
        case PacketType::Fin:
            if (h.flags != 0 && h.flags != kFlagRdmaWrite) return "unknown flags";
            break;
        default:
            if (h.flags != 0) return "unknown flags";
    }
    return nullptr;
}

Engine::Engine(Transport *transport, int rank, int size, const EngineOptions &opts)
    : transport_(transport), rank_(rank), size_(size), opts_(opts) {
    peers_.resize(static_cast<size_t>(size));
    for (auto &p : peers_) p.credits = opts_.credits;
}

Engine::~Engine() = default;

int Engine::init() {
    if (transport_ == nullptr || size_ == 1) return MSG_OK;
    if (transport_->max_iov() < 2) {
        log_error("transport %s cannot send a header and a payload together",
                  transport_->name().c_str());
        return MSG_ERR_NOT_SUPPORTED;
    }
    // Every peer may have credits + 2 packets in flight to us (its data
    // packets plus at most two explicit credit returns), so this many
    // posted buffers never run dry. Large jobs get fewer credits per peer
    // so the buffers fit the receive queue (every rank computes the same).
    size_t peers = static_cast<size_t>(size_ - 1);
    size_t fit = transport_->max_posted_receives() / peers;
    if (fit < 3) {
        log_error("%zu peers do not fit a receive queue of %zu", peers,
                  transport_->max_posted_receives());
        return MSG_ERR_NOT_SUPPORTED;
    }
    if (static_cast<size_t>(opts_.credits) + 2 > fit) {
        opts_.credits = static_cast<int>(fit - 2);
        for (auto &p : peers_) p.credits = opts_.credits;
        log_debug("credits per peer lowered to %d to fit the receive queue", opts_.credits);
    }
    if ((opts_.long_protocol == MSG_PROTOCOL_RDMA && !transport_->supports_rdma_read()) ||
        (opts_.long_protocol == MSG_PROTOCOL_RDMA_WRITE && !transport_->supports_rdma_write()))
        log_debug("transport %s has no RDMA %s: long messages go by send/recv",
                  transport_->name().c_str(),
                  opts_.long_protocol == MSG_PROTOCOL_RDMA ? "read" : "write");
    size_t count = peers * static_cast<size_t>(opts_.credits + 2);
    rx_slab_.resize(count * opts_.buffer_size);
    if (transport_->needs_local_registration() &&
        transport_->register_memory(rx_slab_.data(), rx_slab_.size(), kLocal, &rx_mr_) != 0)
        return MSG_ERR_TRANSPORT;
    for (size_t i = 0; i < count; ++i) {
        auto rb = std::make_unique<RxBuf>();
        rb->buf = rx_slab_.data() + i * opts_.buffer_size;
        repost(rb.get());
        rx_bufs_.push_back(std::move(rb));
    }
    return MSG_OK;
}

int Engine::start_handshake() {
    for (int r = 0; r < size_; ++r)
        if (r != rank_ && !peers_[static_cast<size_t>(r)].failed)
            queue_packet(new_txop(r, PacketType::Hello));
    return MSG_OK;
}

bool Engine::handshake_done() const {
    for (int r = 0; r < size_; ++r) {
        const Peer &p = peers_[static_cast<size_t>(r)];
        if (r != rank_ && !p.hello_seen && !p.failed) return false;
    }
    return true;
}

Engine::Request *Engine::new_request(bool is_send, int peer, int tag, CompletionSink *sink,
                                     void *cookie) {
    auto r = std::make_unique<Request>();
    r->id = next_id_++;
    r->is_send = is_send;
    r->peer = peer;
    r->tag = tag;
    r->sink = sink;
    r->cookie = cookie;
    Request *raw = r.get();
    live_.emplace(raw->id, std::move(r));
    if (is_send) ++live_sends_;
    return raw;
}

void Engine::discard(Request *r) {
    if (r->in_posted) posted_.erase(r->posted_it);
    if (r->is_send) --live_sends_;
    live_.erase(r->id);
}

Engine::Request *Engine::find(uint64_t id, int peer) {
    auto it = live_.find(id);
    if (it == live_.end()) return nullptr;
    if (peer >= 0 && it->second->peer != peer) return nullptr;
    return it->second.get();
}

void Engine::complete(Request *r, int status, size_t bytes) {
    bool slot = r->holds_slot;
    bool is_send = r->is_send;
    if (r->in_posted) posted_.erase(r->posted_it);
    msg_completion_t c{};
    c.op = is_send ? MSG_OP_SEND : MSG_OP_RECV;
    c.status = status;
    c.source = r->peer;
    c.tag = r->tag;
    c.bytes = bytes;
    c.cookie = r->cookie;
    if (status == MSG_OK || status == MSG_ERR_TRUNCATED) {
        if (is_send) {
            ++stats_.messages_sent;
            stats_.bytes_sent += bytes;
        } else {
            ++stats_.messages_received;
            stats_.bytes_received += bytes;
        }
    }
    CompletionSink *sink = r->sink;
    if (is_send) --live_sends_;
    live_.erase(r->id);
    sink->deliver(c);
    if (slot) is_send ? release_send_slot() : release_recv_slot();
}

bool Engine::matches(const Request *r, int src, int tag) const {
    return (r->peer == MSG_ANY_SOURCE || r->peer == src) &&
           (r->tag == MSG_ANY_TAG || r->tag == tag);
}

int Engine::payload_desc(Request *r, const void *buf, size_t len, void **desc) {
    *desc = nullptr;
    if (!transport_->needs_local_registration() || len == 0) return MSG_OK;
    if (!r->mr && transport_->register_memory(buf, len, kLocal, &r->mr) != 0)
        return MSG_ERR_TRANSPORT;
    *desc = r->mr->desc();
    return MSG_OK;
}

int Engine::isend(int dest, int tag, const void *buf, size_t len, CompletionSink *sink,
                  void *cookie) {
    if (peers_[static_cast<size_t>(dest)].failed) return MSG_ERR_PEER_FAILED;
    Request *r = new_request(true, dest, tag, sink, cookie);
    r->sbuf = static_cast<const char *>(buf);
    r->len = len;
    if (dest == rank_) {
        send_self(r);
        return MSG_OK;
    }
    if (len > opts_.eager_max) {
        int rc = start_long_send(r);
        if (rc != MSG_OK) discard(r);
        return rc;
    }
    void *desc = nullptr;
    int rc = payload_desc(r, buf, len, &desc);
    if (rc != MSG_OK) {
        discard(r);
        return rc;
    }
    TxOp *op = new_txop(dest, PacketType::Eager);
    op->hdr.tag = tag;
    op->hdr.len = len;
    op->req_id = r->id;
    op->payload = len;
    op->payload_ptr = buf;
    op->payload_desc = desc;
    queue_packet(op);
    return MSG_OK;
}

void Engine::send_self(Request *r) {
    for (Request *p : posted_) {
        if (!matches(p, rank_, r->tag)) continue;
        deliver_eager(p, rank_, r->tag, r->sbuf, r->len);
        complete(r, MSG_OK, r->len);
        return;
    }
    Unexpected u{rank_, r->tag, PacketType::Eager, {}, r->len, 0, 0, 0, 0};
    if (r->len <= opts_.eager_max) {
        u.data.assign(r->sbuf, r->sbuf + r->len);
        unexpected_.push_back(std::move(u));
        complete(r, MSG_OK, r->len);
        return;
    }
    // Long self sends wait for their receive, like a rendezvous.
    u.type = PacketType::Rts;
    u.send_id = r->id;
    unexpected_.push_back(std::move(u));
}

int Engine::irecv(int source, int tag, void *buf, size_t capacity, CompletionSink *sink,
                  void *cookie) {
    Request *r = new_request(false, source, tag, sink, cookie);
    r->rbuf = static_cast<char *>(buf);
    r->len = capacity;
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
        if (!matches(r, it->src, it->tag)) continue;
        Unexpected u = std::move(*it);
        unexpected_.erase(it);
        if (u.src != rank_) took_unexpected(u);
        if (u.type == PacketType::Eager) {
            deliver_eager(r, u.src, u.tag, u.data.data(), u.data.size());
        } else if (u.src == rank_) {
            Request *s = find(u.send_id, rank_);
            if (s != nullptr) {
                deliver_eager(r, rank_, u.tag, s->sbuf, s->len);
                complete(s, MSG_OK, s->len);
            }
        } else {
            start_long_recv(r, u.src, u.tag, u.len, u.send_id, u.flags, u.addr, u.key);
        }
        return MSG_OK;
    }
    if (source != MSG_ANY_SOURCE && peers_[static_cast<size_t>(source)].failed) {
        discard(r);
        return MSG_ERR_PEER_FAILED;
    }
    r->in_posted = true;
    r->posted_it = posted_.insert(posted_.end(), r);
    return MSG_OK;
}

void Engine::took_unexpected(const Unexpected &u) {
    Peer &p = peers_[static_cast<size_t>(u.src)];
    --p.unexpected_count;
    p.unexpected_bytes -= u.data.size();
    // One message fewer held: one credit held back for it may go home.
    if (p.withheld == 0) return;
    --p.withheld;
    ++p.to_return;
    if (!p.failed) return_credit(u.src);
}

void Engine::deliver_eager(Request *r, int src, int tag, const char *data, size_t len) {
    size_t n = std::min(len, r->len);
    if (n > 0) std::memcpy(r->rbuf, data, n);
    r->peer = src;
    r->tag = tag;
    complete(r, len > r->len ? MSG_ERR_TRUNCATED : MSG_OK, n);
}

Engine::TxOp *Engine::new_txop(int peer, PacketType type) {
    if (tx_free_.empty()) {
        auto slab = std::make_unique<TxOp[]>(kTxSlab);
        void *desc = nullptr;
        if (transport_->needs_local_registration()) {
            std::unique_ptr<MemoryRegion> mr;
            if (transport_->register_memory(slab.get(), sizeof(TxOp) * kTxSlab, kLocal, &mr) == 0) {
                desc = mr->desc();
                tx_mrs_.push_back(std::move(mr));
            }
        }
        for (int i = 0; i < kTxSlab; ++i) {
            slab[i].hdr_desc = desc;
            tx_free_.push_back(&slab[i]);
        }
        tx_slabs_.push_back(std::move(slab));
    }
    TxOp *op = tx_free_.back();
    tx_free_.pop_back();
    std::memset(&op->hdr, 0, sizeof op->hdr);
    op->hdr.magic = kWireMagic;
    op->hdr.version = kWireVersion;
    op->hdr.type = type;
    op->hdr.src = static_cast<uint32_t>(rank_);
    op->peer = peer;
    op->req_id = 0;
    op->payload = 0;
    op->payload_ptr = nullptr;
    op->payload_desc = nullptr;
    return op;
}

void Engine::free_txop(TxOp *op) {
    tx_free_.push_back(op);
}

void Engine::queue_packet(TxOp *op) {
    Peer &p = peers_[static_cast<size_t>(op->peer)];
    if (p.failed) {
        free_txop(op);
        return;
    }
    p.queue.push_back(OutItem{op, 0});
    flush(op->peer);
}

Engine::PostResult Engine::post_packet(TxOp *op, bool consumes_credit) {
    Peer &p = peers_[static_cast<size_t>(op->peer)];
    op->hdr.credits = p.to_return;
    struct iovec iov[2] = {{&op->hdr, sizeof op->hdr},
                           {const_cast<void *>(op->payload_ptr), op->payload}};
    void *desc[2] = {op->hdr_desc, op->payload_desc};
    int rc = transport_->post_send(op->peer, iov, desc, op->payload > 0 ? 2 : 1, &op->ctx);
    if (rc == -EAGAIN) {
        backlog_ = true;
        return PostResult::Again;
    }
    if (rc != 0) {
        log_debug("send to rank %d failed: %s", op->peer, std::strerror(-rc));
        return PostResult::Failed;
    }
    p.to_return = 0;
    if (consumes_credit) --p.credits;
    ++ops_in_flight_;
    return PostResult::Posted;
}

void Engine::flush(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    // New messages keep their order and leave the reserved credits alone;
    // packets of messages under way may pass them, so a peer that holds our
    // credit back for the messages it has not received yet still gets the
    // CTS, chunks and FINs that let it (and us) finish the others.
    auto it = p.queue.begin();
    while (it != p.queue.end() && p.credits > 0) {
        OutItem item = *it;
        if (item.packet != nullptr) {
            if (opens_message(item.packet->hdr.type) && p.credits <= reserved_credits()) {
                ++it;
                continue;
            }
            PostResult pr = post_packet(item.packet, true);
            if (pr == PostResult::Again) return;
            it = p.queue.erase(it);
            if (pr == PostResult::Failed) {
                free_txop(item.packet);
                fail_peer(peer);
                return;
            }
            continue;
        }
        Request *r = find(item.stream, peer);
        if (r == nullptr || r->posted_bytes >= r->accepted) {
            it = p.queue.erase(it);
            continue;
        }
        PostResult pr = emit_chunk(r);
        if (pr == PostResult::Again) return;
        if (pr == PostResult::Failed) {
            fail_peer(peer);
            return;
        }
        if (r->posted_bytes >= r->accepted) it = p.queue.erase(it);
    }
}

void Engine::return_credit(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    // Credit goes back in batches of half. While some is held back, a batch
    // is what the peer can have spent once it is down to its reserve, or the
    // few packets it may still send would never add up to one and it would
    // wait for good.
    int threshold = std::max(1, opts_.credits / 2);
    if (p.withheld > 0)
        threshold = std::min(threshold, std::max(1, opts_.credits - reserved_credits() -
                                                        static_cast<int>(p.withheld)));
    if (p.failed || static_cast<int>(p.to_return) < threshold) {
        p.credit_pending = false;
        return;
    }
    TxOp *op = new_txop(peer, PacketType::Credit);
    PostResult pr = post_packet(op, false);
    p.credit_pending = pr == PostResult::Again;
    if (pr != PostResult::Posted) free_txop(op);
    if (pr == PostResult::Failed) fail_peer(peer);
}

void Engine::repost(RxBuf *rb) {
    void *desc = rx_mr_ ? rx_mr_->desc() : nullptr;
    int rc = transport_->post_recv(rb->buf, opts_.buffer_size, desc, &rb->ctx);
    if (rc == 0) return;
    if (rc != -EAGAIN) log_error("posting a receive buffer failed: %s", std::strerror(-rc));
    rx_unposted_.push_back(rb);
    backlog_ = true;
}

bool Engine::progress() {
    if (transport_ == nullptr) return false;
    TransportCompletion comps[32];
    int n = transport_->poll(comps, 32);
    activity_ += static_cast<uint64_t>(n > 0 ? n : 0);
    for (int i = 0; i < n; ++i) {
        const TransportCompletion &c = comps[i];
        switch (c.kind) {
            case OpKind::Recv:
                handle_recv(reinterpret_cast<RxBuf *>(c.context), c);
                break;
            case OpKind::Send:
                handle_send_done(reinterpret_cast<TxOp *>(c.context), c.error);
                break;
            case OpKind::Read:
                handle_read_done(reinterpret_cast<RmaOp *>(c.context), c.error);
                break;
            case OpKind::Write:
                handle_write_done(reinterpret_cast<RmaOp *>(c.context), c.error);
                break;
        }
    }
    if (backlog_) {
        backlog_ = false;
        std::vector<RxBuf *> again;
        again.swap(rx_unposted_);
        for (RxBuf *rb : again) repost(rb);
        for (int r = 0; r < size_; ++r) {
            Peer &p = peers_[static_cast<size_t>(r)];
            if (!p.queue.empty()) flush(r);
            if (p.credit_pending) return_credit(r);
        }
        std::deque<uint64_t> rma;
        rma.swap(rma_waiting_);
        for (uint64_t id : rma)
            if (Request *r = find(id, -1)) post_rma(r);
    }
    return n > 0;
}

void Engine::handle_recv(RxBuf *rb, const TransportCompletion &c) {
    if (c.error != 0) {
        // Cancelled at shutdown: leave it unposted.
        if (c.error != ECANCELED) repost(rb);
        return;
    }
    WireHeader h;
    if (c.length < sizeof h) {
        ++stats_.bad_headers;
        repost(rb);
        return;
    }
    std::memcpy(&h, rb->buf, sizeof h);
    if (const char *why = validate_header(h, c.length, size_, rank_)) {
        ++stats_.bad_headers;
        log_debug("dropped a packet: %s", why);
        repost(rb);
        return;
    }
    int src = static_cast<int>(h.src);
    // The header's source is what the peer claims; the transport's is where
    // the packet came from. Every later check (a CTS, GO or FIN must name a
    // request of ours with that very peer) rests on the two agreeing.
    if (c.peer != src) {
        ++stats_.bad_headers;
        ++forged_;
        log_debug("dropped a packet claiming rank %d from rank %d", src, c.peer);
        repost(rb);
        return;
    }
    Peer &p = peers_[static_cast<size_t>(src)];
    if (p.failed) {
        repost(rb);
        return;
    }
    if (static_cast<uint64_t>(p.credits) + h.credits > static_cast<uint64_t>(opts_.credits)) {
        ++stats_.bad_headers;
        log_debug("dropped a packet from rank %d: returns more credit than it holds", src);
        repost(rb);
        return;
    }
    p.credits += static_cast<int>(h.credits);
    bool withhold = false;
    const char *payload = rb->buf + sizeof h;
    size_t plen = c.length - sizeof h;
    switch (h.type) {
        case PacketType::Hello:
            p.hello_seen = true;
            break;
        case PacketType::Eager:
        case PacketType::Rts: {
            Request *match = nullptr;
            for (Request *r : posted_)
                if (matches(r, src, h.tag)) {
                    match = r;
                    break;
                }
            if (match == nullptr) {
                Unexpected u{src, h.tag, h.type, {}, h.len, h.send_id, h.flags, h.offset, h.key};
                if (h.type == PacketType::Eager) u.data.assign(payload, payload + plen);
                ++p.unexpected_count;
                p.unexpected_bytes += u.data.size();
                unexpected_.push_back(std::move(u));
                // Over the bound the peer's credit stays here until the
                // application receives: it can send at most its credits' worth
                // more, so what it holds here stays bounded.
                withhold = p.unexpected_count > opts_.unexpected_count ||
                           p.unexpected_bytes > opts_.unexpected_bytes;
            } else if (h.type == PacketType::Eager) {
                deliver_eager(match, src, h.tag, payload, plen);
            } else {
                start_long_recv(match, src, h.tag, h.len, h.send_id, h.flags, h.offset, h.key);
            }
            break;
        }
        case PacketType::Cts:
            on_cts(h, src);
            break;
        case PacketType::Chunk:
            on_chunk(h, src, payload, plen);
            break;
        case PacketType::Go:
            on_go(h, src);
            break;
        case PacketType::Fin:
            if (h.flags & kFlagRdmaWrite)
                on_write_fin(h, src);
            else
                on_fin(h, src);
            break;
        case PacketType::Credit:
            break;
    }
    repost(rb);
    if (p.failed) return;
    if (withhold) {
        if (p.withheld++ == 0)
            log_debug(
                "rank %d has %zu unexpected messages (%zu bytes) here: its credit is held back",
                src, p.unexpected_count, p.unexpected_bytes);
    } else if (h.type != PacketType::Credit) {
        ++p.to_return;
    }
    if (!p.queue.empty()) flush(src);
    return_credit(src);
}

void Engine::handle_send_done(TxOp *op, int error) {
    --ops_in_flight_;
    int peer = op->peer;
    PacketType type = op->hdr.type;
    uint64_t req_id = op->req_id;
    size_t payload = op->payload;
    free_txop(op);
    if (error != 0) {
        if (error != ECANCELED) {
            log_debug("send to rank %d completed with error %d", peer, error);
            fail_peer(peer);
        }
        return;
    }
    Request *r = req_id != 0 ? find(req_id, peer) : nullptr;
    if (r == nullptr) return;
    if (type == PacketType::Eager) {
        complete(r, MSG_OK, r->len);
    } else if (type == PacketType::Chunk) {
        --r->outstanding;
        r->done += payload;
        if (r->done == r->accepted) finish_long_send(r);
    }
}

bool Engine::quiescent() const {
    if (live_sends_ > 0) return false;
    for (const Peer &p : peers_)
        if (!p.failed && !p.queue.empty()) return false;
    return true;
}

void Engine::fail_peer(int rank) {
    Peer &p = peers_[static_cast<size_t>(rank)];
    if (p.failed || rank == rank_) return;
    p.failed = true;
    ++failed_count_;
    ++stats_.peers_failed;
    log_debug("rank %d failed", rank);
    for (OutItem &item : p.queue)
        if (item.packet != nullptr) free_txop(item.packet);
    p.queue.clear();
    unexpected_.remove_if([&](const Unexpected &u) {
        if (u.src != rank || u.type != PacketType::Rts) return false;
        --p.unexpected_count;
        return true;
    });
    // With every other rank gone, a wildcard receive can only hang.
    bool all_gone = failed_count_ == size_ - 1;
    std::vector<uint64_t> victims;
    for (const auto &[id, r] : live_)
        if (r->peer == rank || (all_gone && r->peer == MSG_ANY_SOURCE && !r->is_send))
            victims.push_back(id);
    std::sort(victims.begin(), victims.end());
    for (uint64_t id : victims)
        if (Request *r = find(id, -1)) complete(r, MSG_ERR_PEER_FAILED, 0);
}

size_t Engine::cancel_recvs(CompletionSink *sink) {
    std::vector<Request *> victims;
    for (Request *r : posted_)
        if (r->sink == sink) victims.push_back(r);
    for (Request *r : victims) complete(r, MSG_ERR_CANCELED, 0);
    return victims.size();
}

void Engine::abort_all(int status) {
    std::vector<uint64_t> ids;
    for (const auto &[id, r] : live_) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    send_waiting_.clear();
    recv_waiting_.clear();
    for (uint64_t id : ids)
        if (Request *r = find(id, -1)) {
            r->holds_slot = false;
            complete(r, status, 0);
        }
    unexpected_.clear();
}

}  // namespace msg
