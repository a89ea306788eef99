// The seam between the engine core and the long-message protocols: what a
// protocol does for each step of a rendezvous (LongProtocol), and the few
// services of the core it may use (ProtocolHost). A protocol file includes
// this header, never engine.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "msg/msg.h"
#include "protocol/request.hpp"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace msg {

// RDMA reads and writes of a long message: pieces of at most kRmaPiece bytes,
// at most kRmaInFlight of them posted at once per message.
constexpr int kRmaInFlight = 4;
constexpr size_t kRmaPiece = 32u << 20;

enum class PostResult { Posted, Again, Failed };

// A source of data packets that the core sends in order as credit allows
// (the send/recv protocol's chunks).
class PacketStream {
  public:
    virtual ~PacketStream() = default;
    // Posts r's next packet through ProtocolHost::post_stream_packet.
    virtual PostResult emit(Request &r) = 0;
    // One of r's packets, accounting for `bytes` of its message (its header's
    // len, whether they travelled in it or were copied into place), has been sent.
    virtual void sent(Request &r, size_t bytes) = 0;
};

// Who hears of a long message's RDMA reads or writes.
class RmaClient {
  public:
    virtual ~RmaClient() = default;
    // One of r's pieces has completed (r->done counts it); post more or finish.
    virtual void piece_done(Request &r) = 0;
};

// The core's services to the protocols.
class ProtocolHost {
  public:
    virtual Transport &transport() = 0;
    // Queues a control packet (RTS, CTS, GO, FIN) to `peer`. Only the header's
    // type, tag, flags, len, ids, offset and key are taken from `fields`.
    virtual void send_control(int peer, const WireHeader &fields) = 0;
    // Queues r's data packets from `stream` behind the packets already queued to its peer.
    virtual void send_stream(Request &r, PacketStream &stream) = 0;
    // Posts one data packet of r's now, taking a credit (for PacketStream::emit).
    virtual PostResult post_stream_packet(Request &r, PacketStream &stream,
                                          const WireHeader &fields, const void *payload, size_t len,
                                          void *desc) = 0;
    // Posts r's RDMA reads (receive) or writes (send) of its accepted bytes,
    // as many as may be in flight; `client` hears of each completed piece.
    virtual void move_rma(Request &r, RmaClient &client) = 0;
    // The local descriptor for a payload inside r's buffer (registering it once).
    virtual int payload_desc(Request &r, const void *buf, size_t len, void **desc) = 0;
    // A live request, or null once it has completed.
    virtual Request *find(uint64_t id) = 0;
    // Completes r and reports it; r is gone afterwards.
    virtual void complete(Request &r, int status, size_t bytes) = 0;
    // Payload bytes one chunk carries.
    virtual size_t chunk_payload() const = 0;

  protected:
    ~ProtocolHost() = default;
};

// One long-message protocol. Every one opens with a request to send (RTS),
// so nothing large is ever buffered unexpectedly. The core finds the request
// a packet names (with that very peer, on the side the packet is for) before
// handing the packet on; a handler that returns false has refused it, and
// the core counts it as a bad header.
class LongProtocol {
  public:
    virtual ~LongProtocol() = default;

    // Sender: r is a new long send; registers what the protocol needs and queues the RTS.
    virtual int start_send(Request &r) = 0;
    // Sender: a CTS for r, once and for at most its bytes (the core checked
    // both). On true the core records the receiver's id and accepted bytes.
    virtual bool take_cts(Request &r, const WireHeader &cts) = 0;
    // Sender: r's CTS is taken; the data may move.
    virtual void send_data(Request &r) = 0;
    // Receiver: r has matched an RTS (the core recorded the offer in r).
    virtual void start_recv(Request &r) = 0;

    virtual bool on_chunk(Request &, const WireHeader &, const char *, size_t) { return false; }
    virtual bool on_go(Request &, const WireHeader &) { return false; }
    virtual bool on_fin(Request &, const WireHeader &) { return false; }

    // The protocol (MSG_PROTOCOL_*) that moved r's data, for the per-protocol
    // counts of msg_stats_t.
    virtual int moved_by(const Request &r) const = 0;
    // True when the receiver moves the data (it reads): nothing tells it
    // when the sender's turn has come unless someone sends it.
    virtual bool receiver_pulls() const { return false; }
    // The request `id` of this protocol has completed.
    virtual void ended(uint64_t /*id*/, bool /*is_send*/) {}
    // Every request is about to be completed with an error.
    virtual void abort() {}
};

// Header fields of the packets the protocols send (ProtocolHost fills the rest).
inline WireHeader packet_fields(PacketType type) {
    WireHeader h;
    std::memset(&h, 0, sizeof h);
    h.type = type;
    return h;
}

// The RTS of send r, before the protocol adds its offer.
inline WireHeader rts_fields(const Request &r) {
    WireHeader h = packet_fields(PacketType::Rts);
    h.tag = r.tag;
    h.len = r.len;
    h.send_id = r.id;
    return h;
}

// A plain CTS for receive r: its id and the bytes it accepts.
inline WireHeader cts_fields(const Request &r) {
    WireHeader h = packet_fields(PacketType::Cts);
    h.send_id = r.remote_id;
    h.recv_id = r.id;
    h.len = r.accepted;
    return h;
}

// How a long receive ends once its accepted bytes have landed.
inline int recv_status(const Request &r) {
    return r.msg_len > r.len ? MSG_ERR_TRUNCATED : MSG_OK;
}

}  // namespace msg
