// Packets out: the pool of registered headers, one queue per peer and credit
// flow control over the peers' pre-posted receive buffers (docs/libmsg.md,
// Flow control). A peer whose send fails is reported to the caller (false),
// who fails it; nothing here calls back into the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "protocol/long_protocol.hpp"
#include "protocol/request_table.hpp"

namespace msg {

class PacketFlow {
  public:
    // A packet to send: header, optional payload. Starts with the context the
    // transport hands back.
    struct Packet {
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

    PacketFlow(Transport *transport, int rank, int size, int credits, const RequestTable &requests);
    ~PacketFlow();
    PacketFlow(const PacketFlow &) = delete;
    PacketFlow &operator=(const PacketFlow &) = delete;

    // Packets a peer may have unreturned here: at most `top`, `base` at the
    // start (ReceivePlan; init may lower both).
    void set_credits(int top, int base);

    // A header from the pool, to `peer`, filled but for what the caller adds.
    Packet *packet(int peer, PacketType type);
    // The same with a protocol's fields (type, tag, flags, len, ids, offset, key).
    Packet *packet(int peer, const WireHeader &fields);
    // Queues p behind the packets before it to its peer and sends what credit allows.
    bool send(Packet *p);
    // Queues r's data packets from `stream` (ProtocolHost::send_stream).
    bool send_stream(Request &r, PacketStream &stream);
    // Posts one of r's data packets now (ProtocolHost::post_stream_packet).
    PostResult post_stream_packet(Request &r, PacketStream &stream, const WireHeader &fields,
                                  const void *payload, size_t len, void *desc);
    // Sends what credit allows of peer's queue.
    bool flush(int peer);
    // Returns the peer's credit in an explicit Credit packet once enough is due.
    bool return_credit(int peer);

    // A sent packet's completion: what it was. Its header goes back to the pool.
    struct Sent {
        int peer;
        PacketType type;
        uint64_t req_id;
        uint64_t bytes;  // the header's len: of a stream's packet, the message bytes it moved
        PacketStream *stream;
    };
    Sent finish(OpContext *ctx);

    // Credit a packet from `peer` returns: false (and nothing taken) if more than it holds.
    bool take_returned(int peer, uint32_t credits);
    // One of the peer's packets has been consumed: its credit is due back.
    void consumed(int peer) { ++peers_[static_cast<size_t>(peer)].to_return; }
    // The same, and the peer may hold one more packet here (a buffer was posted for it).
    void grant(int peer);
    // One of the peer's packets has been consumed and its credit is kept: it
    // may hold one packet fewer here.
    void reclaim(int peer) { --peers_[static_cast<size_t>(peer)].window; }
    // Holds the credit of one of its packets back; true for the first held.
    bool withhold(int peer) { return peers_[static_cast<size_t>(peer)].withheld++ == 0; }
    // One held-back credit is due back after all.
    bool give_back_withheld(int peer);
    // Sends to the peer stop: its queue is dropped.
    void close(int peer);

    // Packets the peer may have unreturned here now (ReceivePool decides how it moves).
    int window(int peer) const { return peers_[static_cast<size_t>(peer)].window; }
    bool has_queue(int peer) const { return !peers_[static_cast<size_t>(peer)].queue.empty(); }
    bool credit_pending(int peer) const { return peers_[static_cast<size_t>(peer)].credit_pending; }
    // Nothing queued to a peer still open.
    bool drained() const;
    // A post met a full queue: flush and return_credit should be tried again.
    bool backlog() const { return backlog_; }
    void clear_backlog() { backlog_ = false; }
    size_t in_flight() const { return in_flight_; }

  private:
    struct Item {
        Packet *packet = nullptr;        // a ready packet, or
        uint64_t stream = 0;             // the id of a long send whose data packets go next,
        PacketStream *source = nullptr;  // from this stream
    };
    struct Peer {
        bool closed = false;
        int credits = 0;         // packets we may still send to it
        int window = 0;          // its packets it may have unreturned here
        uint32_t to_return = 0;  // its packets we consumed and not yet credited back
        bool credit_pending = false;
        // Credits held back while its unexpected messages are over the bound;
        // each one given back as the application receives one of them.
        uint32_t withheld = 0;
        std::deque<Item> queue;
    };

    PostResult post(Packet *p, bool consumes_credit);
    // Credits a sender keeps for packets that move messages already under way
    // (CTS, chunks, GO, FIN): a new message (eager or RTS) may not take them.
    int reserved_credits() const { return credits_ > 1 ? 1 : 0; }

    Transport *transport_;
    int rank_;
    int credits_;
    const RequestTable &requests_;
    std::vector<Peer> peers_;
    // Registered slabs of headers, recycled.
    std::vector<std::unique_ptr<Packet[]>> slabs_;
    std::vector<std::unique_ptr<MemoryRegion>> mrs_;
    std::vector<Packet *> free_;
    size_t in_flight_ = 0;  // sends posted and not yet completed
    bool backlog_ = false;
};

}  // namespace msg
