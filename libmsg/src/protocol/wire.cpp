// validate_header: the checks every received packet passes before any of its
// fields is used.
#include "protocol/wire.hpp"

namespace msg {

const char *validate_header(const WireHeader &h, size_t bytes, int size, int self) {
    if (bytes < sizeof(WireHeader)) return "packet shorter than a header";
    if (h.magic != kWireMagic) return "bad magic";
    if (h.version != kWireVersion) return "unsupported protocol version";
    auto t = static_cast<uint8_t>(h.type);
    if (t < static_cast<uint8_t>(PacketType::Hello) || t > static_cast<uint8_t>(PacketType::Credit))
        return "unknown packet type";
    if (h.src >= static_cast<uint32_t>(size) || h.src == static_cast<uint32_t>(self))
        return "source rank out of range";
    size_t plen = bytes - sizeof(WireHeader);
    switch (h.type) {
        case PacketType::Eager:
            if (h.tag < 0) return "negative tag";
            if (plen != h.len) return "eager length does not match the packet";
            break;
        case PacketType::Chunk:
            if (h.flags == kFlagInPlace) {
                if (plen != 0) return "in-place chunk notice with a payload";
                if (h.len == 0) return "in-place chunk notice of no bytes";
            } else if (plen == 0 || plen != h.len) {
                return "chunk length does not match the packet";
            }
            break;
        case PacketType::Rts:
            if (h.tag < 0) return "negative tag";
            if (plen != 0) return "unexpected payload";
            break;
        default:
            if (plen != 0) return "unexpected payload";
    }
    // One protocol per packet: a read offer or a write offer, never both (a shared read is
    // a read whose sender helps).
    switch (h.type) {
        case PacketType::Rts:
            if (h.flags != 0 && h.flags != kFlagRdmaRead && h.flags != kFlagRdmaWrite &&
                h.flags != (kFlagRdmaRead | kFlagShare))
                return "unknown flags";
            break;
        case PacketType::Cts:
            if (h.flags != 0 && h.flags != kFlagRdmaWrite && h.flags != kFlagInPlace &&
                h.flags != kFlagShare)
                return "unknown flags";
            break;
        case PacketType::Fin:
            if (h.flags != 0 && h.flags != kFlagRdmaWrite &&
                h.flags != (kFlagRdmaWrite | kFlagShare))
                return "unknown flags";
            break;
        case PacketType::Chunk:
            if (h.flags != 0 && h.flags != kFlagInPlace) return "unknown flags";
            break;
        default:
            if (h.flags != 0) return "unknown flags";
    }
    return nullptr;
}

}  // namespace msg
