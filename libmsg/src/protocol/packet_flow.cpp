// PacketFlow: every packet the engine sends goes through here. A peer may
// have `credits` of our packets unreturned; credit comes back on its packets
// or in an explicit Credit packet, which consumes none.
#include "protocol/packet_flow.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace msg {

namespace {
constexpr int kSlab = 256;

// Packets that open a message: the receiver may have to hold them.
bool opens_message(PacketType t) {
    return t == PacketType::Eager || t == PacketType::Rts;
}

// What a protocol fills in; the flow owns magic, version, source and credits.
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

PacketFlow::PacketFlow(Transport *transport, int rank, int size, int credits,
                       const RequestTable &requests)
    : transport_(transport), rank_(rank), credits_(credits), requests_(requests) {
    peers_.resize(static_cast<size_t>(size));
    set_credits(credits, credits);
}

PacketFlow::~PacketFlow() = default;

void PacketFlow::set_credits(int top, int base) {
    credits_ = top;
    for (auto &p : peers_) p.credits = p.window = base;
}

void PacketFlow::grant(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    ++p.window;
    p.to_return += 2;
}

PacketFlow::Packet *PacketFlow::packet(int peer, PacketType type) {
    if (free_.empty()) {
        auto slab = std::make_unique<Packet[]>(kSlab);
        void *desc = nullptr;
        if (transport_->needs_local_registration()) {
            std::unique_ptr<MemoryRegion> mr;
            if (transport_->register_memory(slab.get(), sizeof(Packet) * kSlab, kLocal, &mr) == 0) {
                desc = mr->desc();
                mrs_.push_back(std::move(mr));
            }
        }
        for (int i = 0; i < kSlab; ++i) {
            slab[i].hdr_desc = desc;
            free_.push_back(&slab[i]);
        }
        slabs_.push_back(std::move(slab));
    }
    Packet *p = free_.back();
    free_.pop_back();
    std::memset(&p->hdr, 0, sizeof p->hdr);
    p->hdr.magic = kWireMagic;
    p->hdr.version = kWireVersion;
    p->hdr.type = type;
    p->hdr.src = static_cast<uint32_t>(rank_);
    p->peer = peer;
    p->req_id = 0;
    p->payload = 0;
    p->payload_ptr = nullptr;
    p->payload_desc = nullptr;
    p->stream = nullptr;
    return p;
}

PacketFlow::Packet *PacketFlow::packet(int peer, const WireHeader &fields) {
    Packet *p = packet(peer, fields.type);
    copy_fields(&p->hdr, fields);
    return p;
}

bool PacketFlow::send(Packet *p) {
    Peer &peer = peers_[static_cast<size_t>(p->peer)];
    if (peer.closed) {
        free_.push_back(p);
        return true;
    }
    peer.queue.push_back(Item{p, 0, nullptr});
    return flush(p->peer);
}

bool PacketFlow::send_stream(Request &r, PacketStream &stream) {
    peers_[static_cast<size_t>(r.peer)].queue.push_back(Item{nullptr, r.id, &stream});
    return flush(r.peer);
}

PostResult PacketFlow::post_stream_packet(Request &r, PacketStream &stream,
                                          const WireHeader &fields, const void *payload, size_t len,
                                          void *desc) {
    Packet *p = packet(r.peer, fields);
    p->req_id = r.id;
    p->payload = len;
    p->payload_ptr = payload;
    p->payload_desc = desc;
    p->stream = &stream;
    PostResult pr = post(p, true);
    if (pr != PostResult::Posted) free_.push_back(p);
    return pr;
}

PostResult PacketFlow::post(Packet *p, bool consumes_credit) {
    Peer &peer = peers_[static_cast<size_t>(p->peer)];
    p->hdr.credits = peer.to_return;
    struct iovec iov[2] = {{&p->hdr, sizeof p->hdr},
                           {const_cast<void *>(p->payload_ptr), p->payload}};
    void *desc[2] = {p->hdr_desc, p->payload_desc};
    int rc = transport_->post_send(p->peer, iov, desc, p->payload > 0 ? 2 : 1, &p->ctx);
    if (rc == -EAGAIN) {
        backlog_ = true;
        return PostResult::Again;
    }
    if (rc != 0) {
        log_debug("send to rank %d failed: %s", p->peer, std::strerror(-rc));
        return PostResult::Failed;
    }
    peer.to_return = 0;
    if (consumes_credit) --peer.credits;
    ++in_flight_;
    return PostResult::Posted;
}

bool PacketFlow::flush(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    // New messages keep their order and leave the reserved credits alone;
    // packets of messages under way may pass them, so a peer that holds our
    // credit back for the messages it has not received yet still gets the
    // CTS, chunks and FINs that let it (and us) finish the others.
    auto it = p.queue.begin();
    // Usually the item taken is the first: pop_front is far cheaper than a
    // deque's general erase.
    const auto drop = [&p](std::deque<Item>::iterator at) {
        if (at != p.queue.begin()) return p.queue.erase(at);
        p.queue.pop_front();
        return p.queue.begin();
    };
    while (it != p.queue.end() && p.credits > 0) {
        Item item = *it;
        if (item.packet != nullptr) {
            if (opens_message(item.packet->hdr.type) && p.credits <= reserved_credits()) {
                ++it;
                continue;
            }
            PostResult pr = post(item.packet, true);
            if (pr == PostResult::Again) return true;
            it = drop(it);
            if (pr == PostResult::Failed) {
                free_.push_back(item.packet);
                return false;
            }
            continue;
        }
        Request *r = requests_.find(item.stream, peer);
        if (r == nullptr || r->posted_bytes >= r->accepted) {
            it = drop(it);
            continue;
        }
        PostResult pr = item.source->emit(*r);
        if (pr == PostResult::Again) return true;
        if (pr == PostResult::Failed) return false;
        if (r->posted_bytes >= r->accepted) it = drop(it);
    }
    return true;
}

bool PacketFlow::return_credit(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    // Credit goes back in batches of half the peer's window. While some is
    // held back, a batch is what the peer can have spent once it is down to
    // its reserve, or the few packets it may still send would never add up
    // to one and it would wait for good.
    int threshold = std::max(1, p.window / 2);
    if (p.withheld > 0)
        threshold = std::min(
            threshold, std::max(1, p.window - reserved_credits() - static_cast<int>(p.withheld)));
    if (p.closed || static_cast<int>(p.to_return) < threshold) {
        p.credit_pending = false;
        return true;
    }
    Packet *credit = packet(peer, PacketType::Credit);
    PostResult pr = post(credit, false);
    p.credit_pending = pr == PostResult::Again;
    if (pr != PostResult::Posted) free_.push_back(credit);
    return pr != PostResult::Failed;
}

PacketFlow::Sent PacketFlow::finish(OpContext *ctx) {
    Packet *p = reinterpret_cast<Packet *>(ctx);
    --in_flight_;
    Sent s{p->peer, p->hdr.type, p->req_id, p->hdr.len, p->stream};
    free_.push_back(p);
    return s;
}

bool PacketFlow::take_returned(int peer, uint32_t credits) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    if (static_cast<uint64_t>(p.credits) + credits > static_cast<uint64_t>(credits_)) return false;
    p.credits += static_cast<int>(credits);
    return true;
}

bool PacketFlow::give_back_withheld(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    if (p.withheld == 0) return true;
    --p.withheld;
    ++p.to_return;
    return p.closed || return_credit(peer);
}

void PacketFlow::close(int peer) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    p.closed = true;
    for (Item &item : p.queue)
        if (item.packet != nullptr) free_.push_back(item.packet);
    p.queue.clear();
}

bool PacketFlow::drained() const {
    for (const Peer &p : peers_)
        if (!p.closed && !p.queue.empty()) return false;
    return true;
}

}  // namespace msg
