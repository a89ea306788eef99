// The messaging engine's core: requests, eager messages, the dispatch of
// arriving packets and peer failure. Matching keeps the posted receives and
// the unexpected list; packets arrive in ReceiveBuffers and leave through
// PacketFlow (credits, queues), RDMA pieces through RmaMover; long messages
// move by the protocol objects of protocol_set.hpp, which reach the core
// only through ProtocolHost (long_protocol.hpp). Written only against the
// Transport interface; not thread safe by itself: the context serializes
// every call.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "msg/msg.h"
#include "protocol/long_protocol.hpp"
#include "protocol/matching.hpp"
#include "protocol/packet_flow.hpp"
#include "protocol/protocol_choice.hpp"
#include "protocol/receive_buffers.hpp"
#include "protocol/receive_pool.hpp"
#include "protocol/request.hpp"
#include "protocol/request_table.hpp"
#include "protocol/rma_mover.hpp"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace msg {

class ProtocolSet;
class MessageTrace;

// Where a finished operation reports (the API's completion queue).
class CompletionSink {
  public:
    virtual ~CompletionSink() = default;
    virtual void deliver(const msg_completion_t &c) = 0;
};

struct EngineOptions {
    int long_protocol = MSG_PROTOCOL_AUTO;
    bool restricted = false;
    size_t eager_max = 8192;
    size_t buffer_size = 128 * 1024;  // header included
    int credits = 8;
    int active_peers = 16;  // the shared receive pool's size, in peers (ReceivePlan)
    // What one peer's unexpected messages (arrived before a matching receive)
    // may hold here before that peer is slowed: past either bound its credit
    // is held back until the application receives (msg_config_t's
    // unexpected_bytes and unexpected_count).
    size_t unexpected_bytes = 1u << 20;
    size_t unexpected_count = 1024;
    MessageTrace *trace = nullptr;  // VIADUCT_TRACE, or null
};

class Engine final : private ProtocolHost {
  public:
    // transport may be null for a job of one.
    Engine(Transport *transport, int rank, int size, const EngineOptions &opts);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // Allocates and posts the receive buffers. Call before peers may send.
    // MSG_ERR_NO_MEMORY, said on stderr, when they are more than this
    // process may have.
    int init();
    // The receive buffers allocated, posted or spare (ReceivePlan).
    size_t receive_buffers() const { return rx_.count(); }
    // Which protocol moves a long send of each size.
    const ProtocolChoice &protocol_choice() const;
    // Starts the connection handshake with every peer.
    int start_handshake();
    bool handshake_done() const;

    int isend(int dest, int tag, const void *buf, size_t len, CompletionSink *sink, void *cookie);
    // all_tags: an MSG_ANY_TAG receive matches the reserved tags too.
    int irecv(int source, int tag, void *buf, size_t capacity, CompletionSink *sink, void *cookie,
              bool all_tags = false);
    // The first unexpected message a receive (source, tag) would take, left in
    // place: MSG_OK with *out filled (bytes and data: the sender's size),
    // MSG_ERR_TIMEOUT for none yet, MSG_ERR_PEER_FAILED when none can come.
    int probe(int source, int tag, msg_completion_t *out, bool all_tags = false) const;

    // Reaps transport completions and moves protocols forward. True if
    // anything happened.
    bool progress();
    // True while something waits on the transport other than a completion
    // (a queue full, say) and progress should be called again soon.
    bool has_backlog() const { return backlog_ || flow_.backlog(); }
    // Transport sends, reads and writes posted and not yet completed.
    size_t ops_in_flight() const { return flow_.in_flight() + rma_.in_flight(); }
    // Counts transport completions: tells a waiter whether anything moves.
    uint64_t activity() const { return activity_; }
    // No sends in flight and nothing queued to go out.
    bool quiescent() const;

    // Completes every unmatched receive bound to sink with MSG_ERR_CANCELED.
    size_t cancel_recvs(CompletionSink *sink);

    void fail_peer(int rank);
    bool peer_failed(int rank) const { return peers_[static_cast<size_t>(rank)].failed; }
    // Peers failed so far (a collective started after any failure fails at once).
    int failed_peers() const { return failed_count_; }
    int rank() const { return rank_; }
    int size() const { return size_; }
    // Completes every remaining operation with `status`.
    void abort_all(int status);

    const msg_stats_t &stats() const { return stats_; }
    // Packets whose header named another sender than the transport's (also
    // counted in stats().bad_headers).
    uint64_t forged() const { return forged_; }
    // Unexpected messages from `rank` held here, and their payload bytes.
    size_t unexpected_count(int rank) const { return matching_.held_count(rank); }
    size_t unexpected_bytes(int rank) const { return matching_.held_bytes(rank); }
    // Payload bytes one chunk of the send/recv protocol carries.
    size_t chunk_payload() const override { return opts_.buffer_size - sizeof(WireHeader); }

  private:
    using RxBuf = ReceiveBuffers::Buffer;
    struct Peer {
        bool failed = false;
        bool hello_seen = false;
    };
    // A received packet whose header has been checked, on its way to its handler.
    struct Arrival {
        WireHeader h;
        int src;
        const char *payload;
        size_t plen;
        bool withhold = false;  // an unexpected message past its peer's bound
        ReceivePool::Credit credit = ReceivePool::Credit::Return;  // its credit (not withheld)
    };
    using PacketHandler = void (Engine::*)(Arrival &);
    static const PacketHandler kHandlers[static_cast<size_t>(PacketType::Credit) + 1];

    // Requests and matching.
    void discard(Request *r);
    void complete(Request *r, int status, size_t bytes);
    Request *find(uint64_t id, int peer) { return requests_.find(id, peer); }
    // One more long message sent or received by `protocol` (MSG_PROTOCOL_*).
    void count_long(int protocol, bool is_send);
    void send_self(Request *r);
    void take_unexpected(Request *r, Unexpected u);
    void took_unexpected(const Unexpected &u);
    void deliver_eager(Request *r, int src, int tag, const char *data, size_t len);
    void start_long_recv(Request *r, const Offer &o);

    // Packets out, through the flow; a peer it could not send to is failed.
    void send_packet(PacketFlow::Packet *p);
    void flush(int peer);
    void return_credit(int peer);

    // Packets in: checks, then the handler for the packet's type.
    void repost(RxBuf *rb);
    void handle_recv(RxBuf *rb, const TransportCompletion &c);
    bool admit(RxBuf *rb, const TransportCompletion &c, Arrival *a);
    // The packet's buffer and credit once its handler is done: the buffer
    // is posted again (or kept spare), a spare one posted for a grant.
    void settle(RxBuf *rb, Arrival &a);
    void after_packet(const Arrival &a);
    void on_hello(Arrival &a);
    void on_open(Arrival &a);
    void on_cts(Arrival &a);
    void on_chunk(Arrival &a);
    void on_go(Arrival &a);
    void on_fin(Arrival &a);
    void on_credit(Arrival &a);
    // The long message of ours a CTS, chunk, GO or FIN names, with its sender.
    Request *named_request(const Arrival &a);

    // Completions of our own operations.
    void handle_send_done(OpContext *ctx, int error);
    void handle_rma_done(OpContext *ctx, int error);

    // ProtocolHost: what the long-message protocols may ask of the core.
    Transport &transport() override { return *transport_; }
    void send_control(int peer, const WireHeader &fields) override;
    void send_stream(Request &r, PacketStream &stream) override;
    PostResult post_stream_packet(Request &r, PacketStream &stream, const WireHeader &fields,
                                  const void *payload, size_t len, void *desc) override;
    void move_rma(Request &r, RmaClient &client) override;
    int payload_desc(Request &r, const void *buf, size_t len, void **desc) override;
    Request *find(uint64_t id) override { return find(id, -1); }
    void complete(Request &r, int status, size_t bytes) override { complete(&r, status, bytes); }

    Transport *transport_;
    int rank_, size_;
    EngineOptions opts_;
    RequestTable requests_;
    Matching matching_;
    std::vector<Peer> peers_;
    int failed_count_ = 0;
    bool backlog_ = false;  // receive buffers or RDMA pieces wait for a full queue

    ReceiveBuffers rx_;
    std::unique_ptr<ReceivePool> pool_;
    PacketFlow flow_;
    RmaMover rma_;
    uint64_t activity_ = 0;

    // The long-message protocols, chosen once (after opts_: built from it).
    std::unique_ptr<ProtocolSet> protocols_;

    msg_stats_t stats_{};
    uint64_t forged_ = 0;
};

}  // namespace msg
