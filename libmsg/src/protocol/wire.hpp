// The packet header every libmsg packet starts with, and its validation.
// Incoming headers are checked here before any field is trusted.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/config.hpp"

namespace msg {

constexpr uint16_t kWireMagic = 0x5644;  // "VD"
constexpr uint8_t kWireVersion = 1;

enum class PacketType : uint8_t {
    Hello = 1,   // connection handshake at init
    Eager = 2,   // a whole small message
    Rts = 3,     // request to send a long message
    Cts = 4,     // clear to send: the receiver matched it (recv_id, accepted bytes;
                 // with kFlagRdmaWrite also where to write them: offset, key)
    Chunk = 5,   // one piece of a long message (send/recv protocol), or with
                 // kFlagInPlace the notice that it was copied into place
    Go = 6,      // restricted RDMA: the sender's turn has come, read now
    Fin = 7,     // RDMA read: the receiver has read everything; with kFlagRdmaWrite,
                 // RDMA write: the sender's writes have all completed
    Credit = 8,  // returns receive buffers; consumes none itself
};

constexpr uint32_t kFlagRdmaRead = 1;  // Rts: the payload may be read at (offset, key)
// Rts: the sender can write the payload; Cts: write it at (offset, key);
// Fin: it has been written.
constexpr uint32_t kFlagRdmaWrite = 2;
// Send/recv on one host. Cts: the receive buffer, registered for remote writes,
// is at (offset, key), and chunks may be copied straight there; Chunk: its len
// bytes were copied into place at offset, and the packet carries none.
constexpr uint32_t kFlagInPlace = 4;
// RDMA read on one host, the copy shared. Rts (with kFlagRdmaRead): the sender can also copy
// into the receiver's memory in the call. Cts: the receiver reads the first part
// (share_split) and the sender writes the rest at (offset, key). Fin (with kFlagRdmaWrite):
// the sender's part is done; offset: the bytes it wrote there (0: none, read them too).
constexpr uint32_t kFlagShare = 8;

// Where a shared copy of `accepted` bytes splits: the receiver reads [0, split), the sender
// writes [split, accepted). Half, on a page boundary.
constexpr uint64_t share_split(uint64_t accepted) {
    return accepted / 2 / 4096 * 4096;
}

struct WireHeader {
    uint16_t magic;
    uint8_t version;
    PacketType type;
    uint32_t src;      // sending rank
    uint32_t credits;  // receive buffers of the sender's that the receiver may use again
    int32_t tag;
    uint32_t flags;
    uint32_t reserved;
    uint64_t len;      // Eager: payload bytes; Rts: message bytes; Cts: accepted bytes
    uint64_t send_id;  // sender's request id (Rts, Cts, Fin)
    uint64_t recv_id;  // receiver's request id (Cts, Chunk, Go)
    uint64_t offset;   // Chunk: offset in the message; Rts with kFlagRdmaRead, Cts with
                       // kFlagRdmaWrite or kFlagShare: remote address; Fin with kFlagShare:
                       // the bytes the sender wrote
    uint64_t key;      // Rts with kFlagRdmaRead, Cts with kFlagRdmaWrite or kFlagShare: remote key
};
static_assert(sizeof(WireHeader) == kPacketHeaderBytes);

// Checks a received packet of `bytes` bytes from a job of `size` ranks.
// Returns nullptr if it may be trusted, else the reason.
const char *validate_header(const WireHeader &h, size_t bytes, int size, int self);

}  // namespace msg
