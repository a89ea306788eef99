// Engine core: requests, matching, eager messages, the packet-type dispatch
// table and peer failure. Packets leave through PacketFlow, RDMA pieces
// through RmaMover; long messages are the protocol objects'
// (protocol_set.hpp): the core reaches them only through LongProtocol, and
// serves them as their ProtocolHost.
#include "protocol/engine.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/log.hpp"
#include "protocol/message_trace.hpp"
#include "protocol/protocol_set.hpp"

namespace msg {

// Indexed by PacketType (validate_header admits only Hello..Credit).
const Engine::PacketHandler Engine::kHandlers[] = {
    nullptr,           &Engine::on_hello, &Engine::on_open, &Engine::on_open,   &Engine::on_cts,
    &Engine::on_chunk, &Engine::on_go,    &Engine::on_fin,  &Engine::on_credit,
};

Engine::Engine(Transport *transport, int rank, int size, const EngineOptions &opts)
    : transport_(transport),
      rank_(rank),
      size_(size),
      opts_(opts),
      matching_(size),
      flow_(transport, rank, size, opts.credits, requests_),
      rma_(transport) {
    peers_.resize(static_cast<size_t>(size));
    protocols_ = std::make_unique<ProtocolSet>(
        static_cast<ProtocolHost &>(*this), transport_,
        ProtocolChoice(opts_.long_protocol, transport_ ? transport_->name() : "self",
                       opts_.restricted),
        opts_.restricted);
}

Engine::~Engine() = default;

const ProtocolChoice &Engine::protocol_choice() const {
    return protocols_->choice();
}

int Engine::init() {
    if (transport_ == nullptr || size_ == 1) return MSG_OK;
    if (transport_->max_iov() < 2) {
        log_error("transport %s cannot send a header and a payload together",
                  transport_->name().c_str());
        return MSG_ERR_NOT_SUPPORTED;
    }
    ReceivePlan plan;
    std::string why;
    if (!plan_receives(size_, opts_.credits, opts_.active_peers, transport_->max_posted_receives(),
                       &plan, &why)) {
        log_error("%s", why.c_str());
        return MSG_ERR_NOT_SUPPORTED;
    }
    if (plan.credits != opts_.credits)
        log_debug("credits per peer lowered to %d to fit the receive queue", plan.credits);
    opts_.credits = plan.credits;
    flow_.set_credits(plan.credits, plan.base);
    for (const ProtocolChoice::Range &range : protocols_->choice().ranges())
        if ((range.protocol == MSG_PROTOCOL_RDMA && !transport_->supports_rdma_read()) ||
            (range.protocol == MSG_PROTOCOL_RDMA_WRITE && !transport_->supports_rdma_write()))
            log_debug(
                "transport %s has no RDMA %s: long messages of up to %zu bytes go by "
                "send/recv",
                transport_->name().c_str(), range.protocol == MSG_PROTOCOL_RDMA ? "read" : "write",
                range.max_bytes);
    pool_ = std::make_unique<ReceivePool>(size_, plan);
    const int rc = rx_.init(transport_, size_ - 1, plan, opts_.buffer_size);
    if (rx_.has_waiting()) backlog_ = true;
    return rc;
}

int Engine::start_handshake() {
    for (int r = 0; r < size_; ++r)
        if (r != rank_ && !peers_[static_cast<size_t>(r)].failed)
            send_packet(flow_.packet(r, PacketType::Hello));
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

void Engine::discard(Request *r) {
    matching_.unpost(r);
    requests_.remove(r);
}

void Engine::complete(Request *r, int status, size_t bytes) {
    LongProtocol *proto = r->proto;
    const uint64_t id = r->id;
    const bool is_send = r->is_send;
    matching_.unpost(r);
    msg_completion_t c{};
    c.op = is_send ? MSG_OP_SEND : MSG_OP_RECV;
    c.status = status;
    c.source = r->peer;
    c.tag = r->tag;
    c.bytes = bytes;
    c.cookie = r->cookie;
    // A receive reports the sender's size: more than bytes when truncated.
    if (!is_send) c.data = r->msg_len;
    if (status == MSG_OK || status == MSG_ERR_TRUNCATED) {
        if (is_send) {
            ++stats_.messages_sent;
            stats_.bytes_sent += bytes;
        } else {
            ++stats_.messages_received;
            stats_.bytes_received += bytes;
        }
        if (proto != nullptr) count_long(proto->moved_by(*r), is_send);
    }
    if (opts_.trace) opts_.trace->record(*r, status, bytes);
    CompletionSink *sink = r->sink;
    requests_.remove(r);
    sink->deliver(c);
    // Last: the protocol may start another request (restricted mode's slot).
    if (proto != nullptr) proto->ended(id, is_send);
}

void Engine::count_long(int protocol, bool is_send) {
    switch (protocol) {
        case MSG_PROTOCOL_RDMA:
            ++(is_send ? stats_.long_sent_rdma_read : stats_.long_received_rdma_read);
            break;
        case MSG_PROTOCOL_RDMA_WRITE:
            ++(is_send ? stats_.long_sent_rdma_write : stats_.long_received_rdma_write);
            break;
        default:
            ++(is_send ? stats_.long_sent_sendrecv : stats_.long_received_sendrecv);
            break;
    }
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
    Request *r = requests_.add(true, dest, tag, sink, cookie);
    if (opts_.trace) r->posted_ns = MessageTrace::now();
    r->sbuf = static_cast<const char *>(buf);
    r->len = len;
    if (dest == rank_) {
        send_self(r);
        return MSG_OK;
    }
    if (len > opts_.eager_max) {
        r->proto = &protocols_->for_send(len);
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
    PacketFlow::Packet *p = flow_.packet(dest, PacketType::Eager);
    p->hdr.tag = tag;
    p->hdr.len = len;
    p->req_id = r->id;
    p->payload = len;
    p->payload_ptr = buf;
    p->payload_desc = desc;
    send_packet(p);
    return MSG_OK;
}

void Engine::send_self(Request *r) {
    if (Request *p = matching_.first_posted(rank_, r->tag)) {
        ++stats_.expected_messages;
        deliver_eager(p, rank_, r->tag, r->sbuf, r->len);
        complete(r, MSG_OK, r->len);
        return;
    }
    ++stats_.unexpected_messages;
    Unexpected u{PacketType::Eager, Offer{rank_, r->tag, r->len, 0, 0, 0, 0}, {}};
    if (r->len <= opts_.eager_max) {
        u.data.assign(r->sbuf, r->sbuf + r->len);
        matching_.hold(std::move(u), rank_);
        complete(r, MSG_OK, r->len);
        return;
    }
    // Long self sends wait for their receive, like a rendezvous.
    u.type = PacketType::Rts;
    u.offer.send_id = r->id;
    matching_.hold(std::move(u), rank_);
}

int Engine::irecv(int source, int tag, void *buf, size_t capacity, CompletionSink *sink,
                  void *cookie, bool all_tags) {
    Request *r = requests_.add(false, source, tag, sink, cookie);
    if (opts_.trace) r->posted_ns = MessageTrace::now();
    r->all_tags = all_tags;
    r->rbuf = static_cast<char *>(buf);
    r->len = capacity;
    if (std::optional<Unexpected> u = matching_.take_for(*r, rank_)) {
        take_unexpected(r, std::move(*u));
        return MSG_OK;
    }
    if (source != MSG_ANY_SOURCE && peers_[static_cast<size_t>(source)].failed) {
        discard(r);
        return MSG_ERR_PEER_FAILED;
    }
    matching_.post(r);
    return MSG_OK;
}

int Engine::probe(int source, int tag, msg_completion_t *out, bool all_tags) const {
    if (const Unexpected *u = matching_.peek(source, tag, all_tags)) {
        *out = msg_completion_t{};
        out->op = MSG_OP_RECV;
        out->status = MSG_OK;
        out->source = u->offer.src;
        out->tag = u->offer.tag;
        out->bytes = static_cast<size_t>(u->offer.len);
        out->data = u->offer.len;
        return MSG_OK;
    }
    // As a receive would end: its peer gone, or (wildcard) every peer gone.
    if (source != MSG_ANY_SOURCE && peers_[static_cast<size_t>(source)].failed)
        return MSG_ERR_PEER_FAILED;
    if (source == MSG_ANY_SOURCE && size_ > 1 && failed_count_ == size_ - 1)
        return MSG_ERR_PEER_FAILED;
    return MSG_ERR_TIMEOUT;
}

// Receive r has matched unexpected message u (Matching has counted it out).
void Engine::take_unexpected(Request *r, Unexpected u) {
    const Offer &o = u.offer;
    const uint64_t id = r->id;
    if (o.src != rank_) took_unexpected(u);
    // Credit that cannot be given back fails the peer, which completes r (r is gone).
    if (find(id, -1) == nullptr) return;
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
    // One message fewer held: one credit held back for it may go home.
    if (!flow_.give_back_withheld(u.offer.src)) fail_peer(u.offer.src);
}

void Engine::deliver_eager(Request *r, int src, int tag, const char *data, size_t len) {
    size_t n = std::min(len, r->len);
    if (n > 0) std::memcpy(r->rbuf, data, n);
    r->msg_len = len;
    r->peer = src;
    r->tag = tag;
    complete(r, len > r->len ? MSG_ERR_TRUNCATED : MSG_OK, n);
}

// Receive r has matched an RTS: it takes what the RTS offers, and the
// protocol the sender chose moves the message.
void Engine::start_long_recv(Request *r, const Offer &o) {
    matching_.unpost(r);
    r->peer = o.src;
    r->tag = o.tag;
    r->msg_len = o.len;
    r->accepted = std::min<uint64_t>(o.len, r->len);
    r->remote_id = o.send_id;
    r->raddr = o.addr;
    r->rkey = o.key;
    r->offer_flags = o.flags;
    r->proto = &protocols_->for_offer(o.flags, r->accepted);
    r->proto->start_recv(*r);
}

// ---- Packets out ----

void Engine::send_packet(PacketFlow::Packet *p) {
    const int peer = p->peer;
    if (!flow_.send(p)) fail_peer(peer);
}

void Engine::flush(int peer) {
    if (!flow_.flush(peer)) fail_peer(peer);
}

void Engine::return_credit(int peer) {
    if (!flow_.return_credit(peer)) fail_peer(peer);
}

void Engine::send_control(int peer, const WireHeader &fields) {
    send_packet(flow_.packet(peer, fields));
}

void Engine::send_stream(Request &r, PacketStream &stream) {
    if (!flow_.send_stream(r, stream)) fail_peer(r.peer);
}

PostResult Engine::post_stream_packet(Request &r, PacketStream &stream, const WireHeader &fields,
                                      const void *payload, size_t len, void *desc) {
    return flow_.post_stream_packet(r, stream, fields, payload, len, desc);
}

// ---- Progress ----

void Engine::repost(RxBuf *rb) {
    if (!rx_.post(rb)) backlog_ = true;
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
                handle_recv(ReceiveBuffers::of(c.context), c);
                break;
            case OpKind::Send:
                handle_send_done(c.context, c.error);
                break;
            case OpKind::Read:
            case OpKind::Write:
                handle_rma_done(c.context, c.error);
                break;
        }
    }
    if (has_backlog()) {
        backlog_ = false;
        flow_.clear_backlog();
        if (!rx_.post_waiting()) backlog_ = true;
        for (int r = 0; r < size_; ++r) {
            if (flow_.has_queue(r)) flush(r);
            if (flow_.credit_pending(r)) return_credit(r);
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
    settle(rb, a);
    after_packet(a);
}

void Engine::settle(RxBuf *rb, Arrival &a) {
    // Credit returns consume no credit; a withheld one is settled when the
    // application receives; a failed peer's is never returned.
    if (a.h.type == PacketType::Credit || a.withhold || peers_[static_cast<size_t>(a.src)].failed) {
        repost(rb);
        return;
    }
    a.credit = pool_->consumed(a.src, flow_.window(a.src));
    if (a.credit == ReceivePool::Credit::Reclaim) ++stats_.receive_reclaims;
    if (a.credit == ReceivePool::Credit::Grant) ++stats_.receive_grants;
    if (!rx_.settle(rb, a.credit)) backlog_ = true;
}

// Checks a received packet before its handler sees it, and takes the credit
// it returns. False: dropped (counted, unless its sender has failed).
bool Engine::admit(RxBuf *rb, const TransportCompletion &c, Arrival *a) {
    WireHeader &h = a->h;
    if (c.length < sizeof h) {
        ++stats_.bad_headers;
        return false;
    }
    std::memcpy(&h, rb->data, sizeof h);
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
    if (peers_[static_cast<size_t>(a->src)].failed) return false;
    if (!flow_.take_returned(a->src, h.credits)) {
        ++stats_.bad_headers;
        log_debug("dropped a packet from rank %d: returns more credit than it holds", a->src);
        return false;
    }
    a->payload = rb->data + sizeof h;
    a->plen = c.length - sizeof h;
    return true;
}

// After a handler: the packet's own credit goes back (or is held back), and
// whatever waited for credit from this peer may go.
void Engine::after_packet(const Arrival &a) {
    Peer &p = peers_[static_cast<size_t>(a.src)];
    if (p.failed) return;
    if (a.withhold) {
        if (flow_.withhold(a.src))
            log_debug(
                "rank %d has %zu unexpected messages (%zu bytes) here: its credit is held back",
                a.src, matching_.held_count(a.src), matching_.held_bytes(a.src));
    } else if (a.h.type != PacketType::Credit) {
        switch (a.credit) {
            case ReceivePool::Credit::Return:
                flow_.consumed(a.src);
                break;
            case ReceivePool::Credit::Grant:
                flow_.grant(a.src);
                break;
            case ReceivePool::Credit::Reclaim:
                flow_.reclaim(a.src);
                break;
        }
    }
    if (flow_.has_queue(a.src)) flush(a.src);
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
    Request *match = matching_.first_posted(a.src, h.tag);
    if (match == nullptr) {
        Unexpected u{h.type, o, {}};
        ++stats_.unexpected_messages;
        if (h.type == PacketType::Eager) u.data.assign(a.payload, a.payload + a.plen);
        matching_.hold(std::move(u), rank_);
        // Over the bound the peer's credit stays here until the
        // application receives: it can send at most its credits' worth
        // more, so what it holds here stays bounded.
        a.withhold = matching_.held_count(a.src) > opts_.unexpected_count ||
                     matching_.held_bytes(a.src) > opts_.unexpected_bytes;
        return;
    }
    ++stats_.expected_messages;
    if (h.type == PacketType::Eager) {
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

void Engine::handle_send_done(OpContext *ctx, int error) {
    const PacketFlow::Sent s = flow_.finish(ctx);
    if (error != 0) {
        if (error != ECANCELED) {
            log_debug("send to rank %d completed with error %d", s.peer, error);
            fail_peer(s.peer);
        }
        return;
    }
    Request *r = s.req_id != 0 ? find(s.req_id, s.peer) : nullptr;
    if (r == nullptr) return;
    if (s.type == PacketType::Eager)
        complete(r, MSG_OK, r->len);
    else if (s.stream != nullptr)
        s.stream->sent(*r, s.bytes);
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
    return requests_.sends() == 0 && flow_.drained();
}

void Engine::fail_peer(int rank) {
    Peer &p = peers_[static_cast<size_t>(rank)];
    if (p.failed || rank == rank_) return;
    p.failed = true;
    ++failed_count_;
    ++stats_.peers_failed;
    log_debug("rank %d failed", rank);
    flow_.close(rank);
    matching_.drop_offers_from(rank);
    // With every other rank gone, a wildcard receive can only hang.
    bool all_gone = failed_count_ == size_ - 1;
    for (uint64_t id : requests_.ids([&](const Request &r) {
             return r.peer == rank || (all_gone && r.peer == MSG_ANY_SOURCE && !r.is_send);
         }))
        if (Request *r = find(id, -1)) complete(r, MSG_ERR_PEER_FAILED, 0);
}

size_t Engine::cancel_recvs(CompletionSink *sink) {
    const std::vector<Request *> victims = matching_.posted_for(sink);
    for (Request *r : victims) complete(r, MSG_ERR_CANCELED, 0);
    return victims.size();
}

void Engine::abort_all(int status) {
    const std::vector<uint64_t> ids = requests_.ids([](const Request &) { return true; });
    // Nothing waits for a slot any more, and no completion below hands one on.
    protocols_->abort();
    for (uint64_t id : ids)
        if (Request *r = find(id, -1)) complete(r, status, 0);
    matching_.clear();
}

}  // namespace msg
