// Fuzz target: libmsg's packet header validation, checked against what the
// engine relies on once a header has been accepted.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "protocol/wire.hpp"

using msg::PacketType;
using msg::WireHeader;

namespace {

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_packet: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    // Job size and own rank first, then the packet as it came off the wire.
    const int job = 1 + data[0] % 64;
    const int self = data[1] % job;
    const uint8_t *packet = data + 2;
    const size_t bytes = size - 2;
    WireHeader h{};
    std::memcpy(&h, packet, bytes < sizeof h ? bytes : sizeof h);
    const char *why = msg::validate_header(h, bytes, job, self);
    if (why != nullptr) {
        if (*why == '\0') broken("a refusal without a reason");
        return 0;
    }
    if (bytes < sizeof h) broken("a short packet accepted");
    if (h.magic != msg::kWireMagic || h.version != msg::kWireVersion)
        broken("a foreign packet accepted");
    if (h.src >= static_cast<uint32_t>(job) || static_cast<int>(h.src) == self)
        broken("a packet from outside the job accepted");
    const size_t plen = bytes - sizeof h;
    switch (h.type) {
        case PacketType::Eager:
            if (h.tag < 0 || plen != h.len) broken("an eager packet that lies about its size");
            break;
        case PacketType::Chunk:
            // A notice that the chunk was copied into place carries its length, no bytes.
            if (h.flags == msg::kFlagInPlace) {
                if (plen != 0 || h.len == 0) broken("an in-place notice with bytes or no length");
            } else if (plen == 0 || plen != h.len) {
                broken("a chunk that lies about its size");
            }
            break;
        case PacketType::Hello:
        case PacketType::Rts:
        case PacketType::Cts:
        case PacketType::Go:
        case PacketType::Fin:
        case PacketType::Credit:
            if (plen != 0) broken("a control packet with a payload");
            break;
        default:
            broken("an unknown packet type accepted");
    }
    if (h.type == PacketType::Rts && h.tag < 0) broken("a negative tag accepted");
    if ((h.flags & msg::kFlagRdmaRead) && (h.flags & msg::kFlagRdmaWrite))
        broken("a packet offering two protocols accepted");
    if ((h.flags & msg::kFlagInPlace) && h.type != PacketType::Cts && h.type != PacketType::Chunk)
        broken("a place offered or used outside a CTS or chunk");
    if ((h.flags & msg::kFlagInPlace) && h.flags != msg::kFlagInPlace)
        broken("a place together with another protocol's flag");
    // A shared copy: offered with a read, granted alone, its sender's part ended with a write FIN.
    if (h.flags & msg::kFlagShare) {
        const uint32_t rest = h.flags & ~msg::kFlagShare;
        if (!(h.type == PacketType::Rts && rest == msg::kFlagRdmaRead) &&
            !(h.type == PacketType::Cts && rest == 0) &&
            !(h.type == PacketType::Fin && rest == msg::kFlagRdmaWrite))
            broken("a shared copy's flag where no shared copy is");
    }
    return 0;
}
