// The engine's private records: a user request and the per-operation
// contexts handed to the transport (each starts with its OpContext).
#pragma once

#include <list>
#include <memory>
#include <vector>

#include "protocol/engine.hpp"

namespace msg {

// RDMA reads and writes of a long message: pieces of at most kRmaPiece bytes,
// at most kRmaInFlight of them posted at once per message.
constexpr int kRmaInFlight = 4;
constexpr size_t kRmaPiece = 32u << 20;

struct Engine::Request {
    uint64_t id = 0;
    bool is_send = false;
    int peer = 0;  // destination, source, or MSG_ANY_SOURCE until matched
    int tag = 0;
    const char *sbuf = nullptr;
    char *rbuf = nullptr;
    size_t len = 0;  // send: message bytes; receive: capacity
    CompletionSink *sink = nullptr;
    void *cookie = nullptr;
    bool in_posted = false;
    std::list<Request *>::iterator posted_it;

    // Long messages.
    bool is_long = false;
    bool rdma = false;      // RDMA read protocol: the receiver reads
    bool write = false;     // RDMA write protocol: send: offered, then granted; receive: granted
    bool cts = false;       // send: its CTS has arrived (only one may); receive: it has gone out
    uint64_t msg_len = 0;   // receive: the sender's message size
    uint64_t accepted = 0;  // bytes that will move (min of size and capacity)
    uint64_t done = 0;      // bytes moved and completed
    std::vector<bool> chunk_seen;  // send/recv protocol: which chunks have landed
    uint64_t posted_bytes = 0;     // bytes handed to the transport
    int outstanding = 0;           // transport operations in flight
    uint64_t remote_id = 0;        // the other side's request id
    uint64_t raddr = 0, rkey = 0;  // the peer's buffer (read: the sender's; write: the receiver's)
    bool holds_slot = false;       // restricted mode
    std::unique_ptr<MemoryRegion> mr;
};

struct Engine::TxOp {
    OpContext ctx;  // first: the transport hands it back
    WireHeader hdr;
    void *hdr_desc = nullptr;
    int peer = 0;
    uint64_t req_id = 0;
    size_t payload = 0;
    const void *payload_ptr = nullptr;
    void *payload_desc = nullptr;
};

struct Engine::RxBuf {
    OpContext ctx;
    char *buf = nullptr;
};

// One RDMA read or write in flight.
struct Engine::RmaOp {
    OpContext ctx;
    uint64_t req_id = 0;
    size_t len = 0;
};

}  // namespace msg
