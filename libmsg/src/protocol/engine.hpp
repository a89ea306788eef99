// The messaging engine: tag matching, credit flow control over pre-posted
// receive buffers, eager and long-message protocols, restricted mode and
// peer-failure handling — written only against the Transport interface.
// Not thread safe by itself: the context serializes every call.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

#include "msg/msg.h"
#include "protocol/wire.hpp"
#include "transport/transport.hpp"

namespace msg {

// Where a finished operation reports (the API's completion queue).
class CompletionSink {
  public:
    virtual ~CompletionSink() = default;
    virtual void deliver(const msg_completion_t &c) = 0;
};

struct EngineOptions {
    int long_protocol = MSG_PROTOCOL_RDMA;
    bool restricted = false;
    size_t eager_max = 8192;
    size_t buffer_size = 128 * 1024;  // header included
    int credits = 8;
    // What one peer's unexpected messages (arrived before a matching receive)
    // may hold here before that peer is slowed: past either bound its credit
    // is held back until the application receives (msg_config_t's
    // unexpected_bytes and unexpected_count).
    size_t unexpected_bytes = 1u << 20;
    size_t unexpected_count = 1024;
};

class Engine {
  public:
    // transport may be null for a job of one.
    Engine(Transport *transport, int rank, int size, const EngineOptions &opts);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // Allocates and posts the receive buffers. Call before peers may send.
    int init();
    // Starts the connection handshake with every peer.
    int start_handshake();
    bool handshake_done() const;

    int isend(int dest, int tag, const void *buf, size_t len, CompletionSink *sink, void *cookie);
    int irecv(int source, int tag, void *buf, size_t capacity, CompletionSink *sink, void *cookie);

    // Reaps transport completions and moves protocols forward. True if
    // anything happened.
    bool progress();
    // True while something waits on the transport other than a completion
    // (a queue full, say) and progress should be called again soon.
    bool has_backlog() const { return backlog_; }
    // Transport sends, reads and writes posted and not yet completed.
    size_t ops_in_flight() const { return ops_in_flight_; }
    // Counts transport completions: tells a waiter whether anything moves.
    uint64_t activity() const { return activity_; }
    // No sends in flight and nothing queued to go out.
    bool quiescent() const;

    // Completes every unmatched receive bound to sink with MSG_ERR_CANCELED.
    size_t cancel_recvs(CompletionSink *sink);

    void fail_peer(int rank);
    bool peer_failed(int rank) const { return peers_[static_cast<size_t>(rank)].failed; }
    // Completes every remaining operation with `status`.
    void abort_all(int status);

    const msg_stats_t &stats() const { return stats_; }
    // Packets whose header named another sender than the transport's (also
    // counted in stats().bad_headers).
    uint64_t forged() const { return forged_; }
    // Unexpected messages from `rank` held here, and their payload bytes.
    size_t unexpected_count(int rank) const {
        return peers_[static_cast<size_t>(rank)].unexpected_count;
    }
    size_t unexpected_bytes(int rank) const {
        return peers_[static_cast<size_t>(rank)].unexpected_bytes;
    }
    size_t chunk_payload() const { return opts_.buffer_size - sizeof(WireHeader); }

  private:
    struct Request;
    struct TxOp;
    struct RxBuf;
    struct RmaOp;
    struct OutItem {
        TxOp *packet = nullptr;  // a ready packet, or
        uint64_t stream = 0;     // the id of a long send whose chunks go next
    };
    struct Peer {
        bool failed = false;
        bool hello_seen = false;
        int credits = 0;         // packets we may still send to it
        uint32_t to_return = 0;  // its packets we consumed and not yet credited back
        bool credit_pending = false;
        // Credits held back while its unexpected messages are over the bound;
        // each one given back as the application receives one of them.
        uint32_t withheld = 0;
        size_t unexpected_count = 0, unexpected_bytes = 0;
        std::deque<OutItem> queue;
    };
    struct Unexpected {
        int src;
        int tag;
        PacketType type;  // Eager (data held) or Rts (src == self: a long self send)
        std::vector<char> data;
        uint64_t len = 0;
        uint64_t send_id = 0;
        uint32_t flags = 0;
        uint64_t addr = 0, key = 0;
    };

    enum class PostResult { Posted, Again, Failed };

    // engine.cpp
    void discard(Request *r);
    Request *new_request(bool is_send, int peer, int tag, CompletionSink *sink, void *cookie);
    void complete(Request *r, int status, size_t bytes);
    TxOp *new_txop(int peer, PacketType type);
    void free_txop(TxOp *op);
    void queue_packet(TxOp *op);
    void flush(int peer);
    PostResult post_packet(TxOp *op, bool consumes_credit);
    void return_credit(int peer);
    // Credits a sender keeps for packets that move messages already under way
    // (CTS, chunks, GO, FIN): a new message (eager or RTS) may not take them.
    int reserved_credits() const { return opts_.credits > 1 ? 1 : 0; }
    void took_unexpected(const Unexpected &u);
    void handle_recv(RxBuf *rb, const TransportCompletion &c);
    void handle_send_done(TxOp *op, int error);
    void repost(RxBuf *rb);
    void deliver_eager(Request *r, int src, int tag, const char *data, size_t len);
    bool matches(const Request *r, int src, int tag) const;
    void send_self(Request *r);
    int payload_desc(Request *r, const void *buf, size_t len, void **desc);

    // long_message.cpp
    int start_long_send(Request *r);
    void start_long_recv(Request *r, int src, int tag, uint64_t len, uint64_t send_id,
                         uint32_t flags, uint64_t addr, uint64_t key);
    void grant_recv(Request *r);
    void start_send_data(Request *r);
    void begin_reads(Request *r);
    // A receive's RDMA reads or a send's RDMA writes, as many as may be in flight.
    void post_rma(Request *r);
    // Counts a finished read or write into its request; null if the request
    // is gone or the operation failed (the peer is then failed).
    Request *rma_done(RmaOp *op, int error);
    void handle_read_done(RmaOp *op, int error);
    RmaOp *take_rma_op(uint64_t req_id, size_t len);
    void give_rma_op(RmaOp *op);
    void finish_long_recv(Request *r);
    void finish_long_send(Request *r);
    void release_send_slot();
    void release_recv_slot();
    void on_cts(const WireHeader &h, int src);
    void on_go(const WireHeader &h, int src);
    void on_fin(const WireHeader &h, int src);
    void on_chunk(const WireHeader &h, int src, const char *payload, size_t plen);
    PostResult emit_chunk(Request *r);
    Request *find(uint64_t id, int peer);

    // rdma_write.cpp
    bool offer_write_target(Request *r, WireHeader *cts);
    bool valid_write_target(const Request *r, const WireHeader &cts) const;
    void handle_write_done(RmaOp *op, int error);
    void on_write_fin(const WireHeader &h, int src);

    Transport *transport_;
    int rank_, size_;
    EngineOptions opts_;
    uint64_t next_id_ = 1;
    std::unordered_map<uint64_t, std::unique_ptr<Request>> live_;
    std::list<Request *> posted_;       // receives in posting order
    std::list<Unexpected> unexpected_;  // arrivals in arrival order
    std::vector<Peer> peers_;
    int failed_count_ = 0;
    bool backlog_ = false;

    // Receive buffers: one registered slab.
    std::vector<char> rx_slab_;
    std::unique_ptr<MemoryRegion> rx_mr_;
    std::vector<std::unique_ptr<RxBuf>> rx_bufs_;
    std::vector<RxBuf *> rx_unposted_;
    // Send-side packet headers: registered slabs, recycled.
    std::vector<std::unique_ptr<TxOp[]>> tx_slabs_;
    std::vector<std::unique_ptr<MemoryRegion>> tx_mrs_;
    std::vector<TxOp *> tx_free_;
    std::vector<std::unique_ptr<RmaOp>> rma_pool_;
    std::vector<RmaOp *> rma_free_;
    std::deque<uint64_t> rma_waiting_;  // long messages whose reads or writes hit a full queue
    size_t ops_in_flight_ = 0;          // transport sends, reads and writes not yet completed
    uint64_t activity_ = 0;
    size_t live_sends_ = 0;

    // Restricted mode: one long send and one long receive moving data.
    bool send_slot_busy_ = false, recv_slot_busy_ = false;
    std::deque<uint64_t> send_waiting_, recv_waiting_;

    msg_stats_t stats_{};
    uint64_t forged_ = 0;
};

}  // namespace msg
