// Engine core: requests, matching, eager messages, credit flow control,
// packet queues, the packet-type dispatch table and peer failure. Long
// messages are the protocol objects' (protocol_set.hpp); the core reaches
// them only through LongProtocol, and serves them as their ProtocolHost.
#include "protocol/engine.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.hpp"
#include "protocol/protocol_set.hpp"

namespace msg {

// What the engine hands the transport: each record starts with its OpContext,
// which the transport hands back on completion.
struct Engine::TxOp {
    OpContext ctx;
    WireHeader hdr;
    void *hdr_desc = nullptr;
    int peer = 0;
    uint64_t req_id = 0;
    size_t payload = 0;
    const void *payload_ptr = nullptr;
    void *payload_desc = nullptr;
    PacketStream *stream = nullptr;  // a data packet of this stream's
};

struct Engine::RxBuf {
    OpContext ctx;
    char *buf = nullptr;
};

namespace {
constexpr int kTxSlab = 256;

// A positive whole number from the environment, or `fallback`.
size_t env_size(const char *name, size_t fallback) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    char *end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (errno != 0 || *end != '\0' || n == 0 || v[0] == '-') {
        log_error("%s=%s is not a positive whole number; using %zu", name, v, fallback);
        return fallback;
    }
    return static_cast<size_t>(n);
}

// Packets that open a message: the receiver may have to hold them.
bool opens_message(PacketType t) {
    return t == PacketType::Eager || t == PacketType::Rts;
}
}  // namespace

// Indexed by PacketType (validate_header admits only Hello..Credit).
const Engine::PacketHandler Engine::kHandlers[] = {
    nullptr,           &Engine::on_hello, &Engine::on_open, &Engine::on_open,   &Engine::on_cts,
    &Engine::on_chunk, &Engine::on_go,    &Engine::on_fin,  &Engine::on_credit,
};

Engine::Engine(Transport *transport, int rank, int size, const EngineOptions &opts)
    : transport_(transport), rank_(rank), size_(size), opts_(opts), rma_(transport) {
    opts_.unexpected_bytes = env_size("VIADUCT_UNEXPECTED_BYTES", opts_.unexpected_bytes);
    opts_.unexpected_count = env_size("VIADUCT_UNEXPECTED_COUNT", opts_.unexpected_count);
    peers_.resize(static_cast<size_t>(size));
    for (auto &p : peers_) p.credits = opts_.credits;
    protocols_ = std::make_unique<ProtocolSet>(static_cast<ProtocolHost &>(*this), transport_,
                                               opts_.long_protocol, opts_.restricted);
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

// ---- Requests and matching ----

Request *Engine::new_request(bool is_send, int peer, int tag, CompletionSink *sink, void *cookie) {
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

Request *Engine::find(uint64_t id, int peer) {
    auto it = live_.find(id);
    if (it == live_.end()) return nullptr;
    if (peer >= 0 && it->second->peer != peer) return nullptr;
    return it->second.get();
}

void Engine::complete(Request *r, int status, size_t bytes) {
    LongProtocol *proto = r->proto;
    const uint64_t id = r->id;
    const bool is_send = r->is_send;
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
    live_.erase(id);
    sink->deliver(c);
    // Last: the protocol may start another request (restricted mode's slot).
    if (proto != nullptr) proto->ended(id, is_send);
}

bool Engine::matches(const Request *r, int src, int tag) const {
    return (r->peer == MSG_ANY_SOURCE || r->peer == src) &&
           (r->tag == MSG_ANY_TAG || r->tag == tag);
}

int Engine::payload_desc(Request &r, const void *buf, size_t len, void **desc) {
    *desc = nullptr;
    if (!transport_->needs_local_registration() || len == 0) return MSG_OK;
    if (!r.mr && transport_->register_memory(buf, len, kLocal, &r.mr) != 0)
        return MSG_ERR_TRANSPORT;
    *desc = r.mr->desc();
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
        r->proto = &protocols_->for_send();
        int rc = r->proto->start_send(*r);
        if (rc != MSG_OK) discard(r);
        return rc;
    }
    void *desc = nullptr;
    int rc = payload_desc(*r, buf, len, &desc);
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
    Unexpected u{PacketType::Eager, Offer{rank_, r->tag, r->len, 0, 0, 0, 0}, {}};
    if (r->len <= opts_.eager_max) {
        u.data.assign(r->sbuf, r->sbuf + r->len);
        unexpected_.push_back(std::move(u));
        complete(r, MSG_OK, r->len);
        return;
    }
    // Long self sends wait for their receive, like a rendezvous.
    u.type = PacketType::Rts;
    u.offer.send_id = r->id;
    unexpected_.push_back(std::move(u));
}

int Engine::irecv(int source, int tag, void *buf, size_t capacity, CompletionSink *sink,
                  void *cookie) {
    Request *r = new_request(false, source, tag, sink, cookie);
    r->rbuf = static_cast<char *>(buf);
    r->len = capacity;
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
        if (!matches(r, it->offer.src, it->offer.tag)) continue;
        Unexpected u = std::move(*it);
        unexpected_.erase(it);
        take_unexpected(r, std::move(u));
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

// Receive r has matched unexpected message u.
void Engine::take_unexpected(Request *r, Unexpected u) {
    const Offer &o = u.offer;
    if (o.src != rank_) took_unexpected(u);
    if (u.type == PacketType::Eager) {
        deliver_eager(r, o.src, o.tag, u.data.data(), u.data.size());
    } else if (o.src == rank_) {
        Request *s = find(o.send_id, rank_);
        if (s != nullptr) {
            deliver_eager(r, rank_, o.tag, s->sbuf, s->len);
            complete(s, MSG_OK, s->len);
        }
    } else {
        start_long_recv(r, o);
    }
}

void Engine::took_unexpected(const Unexpected &u) {
    Peer &p = peers_[static_cast<size_t>(u.offer.src)];
    --p.unexpected_count;
    p.unexpected_bytes -= u.data.size();
    // One message fewer held: one credit held back for it may go home.
    if (p.withheld == 0) return;
    --p.withheld;
    ++p.to_return;
    if (!p.failed) return_credit(u.offer.src);
}

void Engine::deliver_eager(Request *r, int src, int tag, const char *data, size_t len) {
    size_t n = std::min(len, r->len);
    if (n > 0) std::memcpy(r->rbuf, data, n);
    r->peer = src;
    r->tag = tag;
    complete(r, len > r->len ? MSG_ERR_TRUNCATED : MSG_OK, n);
}

// Receive r has matched an RTS: it takes what the RTS offers, and the
// protocol the sender chose moves the message.
void Engine::start_long_recv(Request *r, const Offer &o) {
    if (r->in_posted) {
        posted_.erase(r->posted_it);
        r->in_posted = false;
    }
    r->peer = o.src;
    r->tag = o.tag;
    r->msg_len = o.len;
    r->accepted = std::min<uint64_t>(o.len, r->len);
    r->remote_id = o.send_id;
    r->raddr = o.addr;
    r->rkey = o.key;
    r->proto = &protocols_->for_offer(o.flags, r->accepted);
    r->proto->start_recv(*r);
}

// ---- Packets out ----

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
    op->stream = nullptr;
    return op;
}

void Engine::free_txop(TxOp *op) {
    tx_free_.push_back(op);
}

namespace {
// What a protocol fills in; the core owns magic, version, source and credits.
void copy_fields(WireHeader *to, const WireHeader &from) {
    to->tag = from.tag;
    to->flags = from.flags;
    to->len = from.len;
    to->send_id = from.send_id;
    to->recv_id = from.recv_id;
    to->offset = from.offset;
    to->key = from.key;
}
}  // namespace

void Engine::send_control(int peer, const WireHeader &fields) {
    TxOp *op = new_txop(peer, fields.type);
    copy_fields(&op->hdr, fields);
    queue_packet(op);
}

void Engine::send_stream(Request &r, PacketStream &stream) {
    Peer &p = peers_[static_cast<size_t>(r.peer)];
    p.queue.push_back(OutItem{nullptr, r.id, &stream});
    flush(r.peer);
}

PostResult Engine::post_stream_packet(Request &r, PacketStream &stream, const WireHeader &fields,
                                      const void *payload, size_t len, void *desc) {
    TxOp *op = new_txop(r.peer, fields.type);
    copy_fields(&op->hdr, fields);
    op->req_id = r.id;
    op->payload = len;
    op->payload_ptr = payload;
    op->payload_desc = desc;
    op->stream = &stream;
    PostResult pr = post_packet(op, true);
    if (pr != PostResult::Posted) free_txop(op);
    return pr;
}

void Engine::queue_packet(TxOp *op) {
    Peer &p = peers_[static_cast<size_t>(op->peer)];
    if (p.failed) {
        free_txop(op);
        return;
    }
    p.queue.push_back(OutItem{op, 0, nullptr});
    flush(op->peer);
}

PostResult Engine::post_packet(TxOp *op, bool consumes_credit) {
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
        PostResult pr = item.source->emit(*r);
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

// ---- Progress ----

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
            case OpKind::Write:
                handle_rma_done(c.context, c.error);
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
        for (const auto &[id, client] : rma_.take_waiting())
            if (Request *r = find(id, -1)) move_rma(*r, *client);
    }
    return n > 0;
}

// ---- Packets in ----

void Engine::handle_recv(RxBuf *rb, const TransportCompletion &c) {
    if (c.error != 0) {
        // Cancelled at shutdown: leave it unposted.
        if (c.error != ECANCELED) repost(rb);
        return;
    }
    Arrival a;
    if (!admit(rb, c, &a)) {
        repost(rb);
        return;
    }
    (this->*kHandlers[static_cast<size_t>(a.h.type)])(a);
    repost(rb);
    after_packet(a);
}

// Checks a received packet before its handler sees it, and takes the credit
// it returns. False: dropped (counted, unless its sender has failed).
bool Engine::admit(RxBuf *rb, const TransportCompletion &c, Arrival *a) {
    WireHeader &h = a->h;
    if (c.length < sizeof h) {
        ++stats_.bad_headers;
        return false;
    }
    std::memcpy(&h, rb->buf, sizeof h);
    if (const char *why = validate_header(h, c.length, size_, rank_)) {
        ++stats_.bad_headers;
        log_debug("dropped a packet: %s", why);
        return false;
    }
    a->src = static_cast<int>(h.src);
    // The header's source is what the peer claims; the transport's is where
    // the packet came from. Every later check (a CTS, GO or FIN must name a
    // request of ours with that very peer) rests on the two agreeing.
    if (c.peer != a->src) {
        ++stats_.bad_headers;
        ++forged_;
        log_debug("dropped a packet claiming rank %d from rank %d", a->src, c.peer);
        return false;
    }
    Peer &p = peers_[static_cast<size_t>(a->src)];
    if (p.failed) return false;
    if (static_cast<uint64_t>(p.credits) + h.credits > static_cast<uint64_t>(opts_.credits)) {
        ++stats_.bad_headers;
        log_debug("dropped a packet from rank %d: returns more credit than it holds", a->src);
        return false;
    }
    p.credits += static_cast<int>(h.credits);
    a->payload = rb->buf + sizeof h;
    a->plen = c.length - sizeof h;
    return true;
}

// After a handler: the packet's own credit goes back (or is held back), and
// whatever waited for credit from this peer may go.
void Engine::after_packet(const Arrival &a) {
    Peer &p = peers_[static_cast<size_t>(a.src)];
    if (p.failed) return;
    if (a.withhold) {
        if (p.withheld++ == 0)
            log_debug(
                "rank %d has %zu unexpected messages (%zu bytes) here: its credit is held back",
                a.src, p.unexpected_count, p.unexpected_bytes);
    } else if (a.h.type != PacketType::Credit) {
        ++p.to_return;
    }
    if (!p.queue.empty()) flush(a.src);
    return_credit(a.src);
}

void Engine::on_hello(Arrival &a) {
    peers_[static_cast<size_t>(a.src)].hello_seen = true;
}

void Engine::on_credit(Arrival &) {}

// Eager or RTS: the first posted receive that matches takes it, or it waits
// in the unexpected list.
void Engine::on_open(Arrival &a) {
    const WireHeader &h = a.h;
    Offer o{a.src, h.tag, h.len, h.send_id, h.flags, h.offset, h.key};
    Request *match = nullptr;
    for (Request *r : posted_)
        if (matches(r, a.src, h.tag)) {
            match = r;
            break;
        }
    if (match == nullptr) {
        Peer &p = peers_[static_cast<size_t>(a.src)];
        Unexpected u{h.type, o, {}};
        if (h.type == PacketType::Eager) u.data.assign(a.payload, a.payload + a.plen);
        ++p.unexpected_count;
        p.unexpected_bytes += u.data.size();
        unexpected_.push_back(std::move(u));
        // Over the bound the peer's credit stays here until the
        // application receives: it can send at most its credits' worth
        // more, so what it holds here stays bounded.
        a.withhold = p.unexpected_count > opts_.unexpected_count ||
                     p.unexpected_bytes > opts_.unexpected_bytes;
    } else if (h.type == PacketType::Eager) {
        deliver_eager(match, a.src, h.tag, a.payload, a.plen);
    } else {
        start_long_recv(match, o);
    }
}

Request *Engine::named_request(const Arrival &a) {
    // CTS and the RDMA read's FIN answer a send of ours; chunks, GO and the
    // RDMA write's FIN a receive.
    const bool to_send = a.h.type == PacketType::Cts ||
                         (a.h.type == PacketType::Fin && (a.h.flags & kFlagRdmaWrite) == 0);
    Request *r = find(to_send ? a.h.send_id : a.h.recv_id, a.src);
    if (r == nullptr || r->is_send != to_send || r->proto == nullptr) return nullptr;
    return r;
}

void Engine::on_cts(Arrival &a) {
    Request *r = named_request(a);
    // Once, for no more than its bytes, and of the kind its protocol takes.
    if (r == nullptr || r->cts || a.h.len > r->len || !r->proto->take_cts(*r, a.h)) {
        ++stats_.bad_headers;
        return;
    }
    r->cts = true;
    r->remote_id = a.h.recv_id;
    r->accepted = a.h.len;
    r->proto->send_data(*r);
}

void Engine::on_chunk(Arrival &a) {
    Request *r = named_request(a);
    if (r == nullptr || !r->proto->on_chunk(*r, a.h, a.payload, a.plen)) ++stats_.bad_headers;
}

void Engine::on_go(Arrival &a) {
    Request *r = named_request(a);
    if (r == nullptr || !r->proto->on_go(*r, a.h)) ++stats_.bad_headers;
}

void Engine::on_fin(Arrival &a) {
    Request *r = named_request(a);
    if (r == nullptr || !r->proto->on_fin(*r, a.h)) ++stats_.bad_headers;
}

// ---- Completions of our own operations ----

void Engine::handle_send_done(TxOp *op, int error) {
    --ops_in_flight_;
    int peer = op->peer;
    PacketType type = op->hdr.type;
    uint64_t req_id = op->req_id;
    size_t payload = op->payload;
    PacketStream *stream = op->stream;
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
    if (type == PacketType::Eager)
        complete(r, MSG_OK, r->len);
    else if (stream != nullptr)
        stream->sent(*r, payload);
}

void Engine::move_rma(Request &r, RmaClient &client) {
    PostResult pr = rma_.post(r, client);
    if (pr == PostResult::Again)
        backlog_ = true;
    else if (pr == PostResult::Failed)
        fail_peer(r.peer);
}

// Counts a finished read or write into its request and tells its protocol;
// a failed one fails the peer.
void Engine::handle_rma_done(OpContext *ctx, int error) {
    const RmaMover::Piece piece = rma_.finish(ctx);
    Request *r = find(piece.req_id, -1);
    if (r == nullptr) return;
    if (error != 0) {
        if (error != ECANCELED) {
            log_debug("RDMA %s rank %d completed with error %d",
                      r->is_send ? "write to" : "read from", r->peer, error);
            fail_peer(r->peer);
        }
        return;
    }
    --r->outstanding;
    r->done += piece.len;
    piece.client->piece_done(*r);
}

// ---- Ending ----

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
        if (u.offer.src != rank || u.type != PacketType::Rts) return false;
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
    // Nothing waits for a slot any more, and no completion below hands one on.
    protocols_->abort();
    for (uint64_t id : ids)
        if (Request *r = find(id, -1)) complete(r, status, 0);
    unexpected_.clear();
}

}  // namespace msg
