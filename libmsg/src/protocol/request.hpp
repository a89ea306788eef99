// A user request as the engine core and the long-message protocols see it:
// what the application asked for, and where a long message stands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include "transport/transport.hpp"

namespace msg {

class CompletionSink;
class LongProtocol;

struct Request {
    uint64_t id = 0;
    bool is_send = false;
    int peer = 0;  // destination, source, or MSG_ANY_SOURCE until matched
    int tag = 0;
    bool all_tags = false;  // receive: MSG_ANY_TAG matches the reserved tags too
    const char *sbuf = nullptr;
    char *rbuf = nullptr;
    size_t len = 0;  // send: message bytes; receive: capacity
    CompletionSink *sink = nullptr;
    void *cookie = nullptr;
    bool in_posted = false;
    std::list<Request *>::iterator posted_it;
    uint64_t posted_ns = 0;  // set only while a message trace records

    // Long messages: the protocol that moves this one (null: eager or a self send).
    LongProtocol *proto = nullptr;
    bool cts = false;       // send: its CTS has arrived (only one may); receive: it has gone out
    uint64_t msg_len = 0;   // receive: the sender's message size (once matched)
    uint64_t accepted = 0;  // bytes that will move (min of size and capacity)
    uint64_t done = 0;      // bytes moved and completed
    uint64_t posted_bytes = 0;     // bytes handed to the transport
    int outstanding = 0;           // transport operations in flight
    uint64_t remote_id = 0;        // the other side's request id
    uint64_t raddr = 0, rkey = 0;  // the peer's buffer (read: the sender's; write: the receiver's)
    std::unique_ptr<MemoryRegion> mr;
    std::vector<bool> chunk_seen;  // send/recv: which chunks have landed
    bool chunked = false;          // RDMA write: no write target, so it moves by chunks
    bool in_place = false;         // send/recv: chunks copied into the receiver's buffer
    // RDMA read on one host, the copy shared (kFlagShare): send: offered in the RTS;
    // receive: the sender writes [share_split(accepted), accepted) while this side reads the
    // rest, and peer_wrote says its FIN has come.
    bool share = false;
    bool peer_wrote = false;
    uint32_t offer_flags = 0;  // receive: the flags of the RTS it matched
    uint64_t rma_end = 0;      // the RDMA pieces stop here (0: at accepted)
    uint64_t rma_until() const { return rma_end != 0 ? rma_end : accepted; }
};

}  // namespace msg
