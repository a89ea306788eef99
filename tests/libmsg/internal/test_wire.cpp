// Packet-header validation: every field a peer controls is checked before use.
#include <catch2/catch.hpp>
#include <cstring>

#include "protocol/wire.hpp"

namespace {

msg::WireHeader good(msg::PacketType type, uint64_t len = 0) {
    msg::WireHeader h;
    std::memset(&h, 0, sizeof h);
    h.magic = msg::kWireMagic;
    h.version = msg::kWireVersion;
    h.type = type;
    h.src = 1;
    h.len = len;
    return h;
}

constexpr int kSize = 4;
constexpr int kSelf = 0;
constexpr size_t kHdr = sizeof(msg::WireHeader);

}  // namespace

TEST_CASE("well-formed headers of every type pass", "[wire]") {
    CHECK(msg::validate_header(good(msg::PacketType::Hello), kHdr, kSize, kSelf) == nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Eager, 0), kHdr, kSize, kSelf) == nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Eager, 100), kHdr + 100, kSize, kSelf) ==
          nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Rts, 1 << 30), kHdr, kSize, kSelf) == nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Chunk, 512), kHdr + 512, kSize, kSelf) ==
          nullptr);
    for (auto t :
         {msg::PacketType::Cts, msg::PacketType::Go, msg::PacketType::Fin, msg::PacketType::Credit})
        CHECK(msg::validate_header(good(t), kHdr, kSize, kSelf) == nullptr);
}

TEST_CASE("a short packet, bad magic or an unknown version is refused", "[wire]") {
    auto h = good(msg::PacketType::Hello);
    CHECK(msg::validate_header(h, kHdr - 1, kSize, kSelf) != nullptr);
    h.magic = 0x1234;
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
    h = good(msg::PacketType::Hello);
    h.version = msg::kWireVersion + 1;
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
}

TEST_CASE("unknown types and impossible sources are refused", "[wire]") {
    auto h = good(msg::PacketType::Hello);
    h.type = static_cast<msg::PacketType>(0);
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
    h.type = static_cast<msg::PacketType>(200);
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
    h = good(msg::PacketType::Hello);
    h.src = kSize;  // outside the job
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
    h.src = kSelf;  // claims to be us
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
}

TEST_CASE("lengths that disagree with the packet are refused", "[wire]") {
    // Eager: the header's length must be exactly the payload that arrived.
    CHECK(msg::validate_header(good(msg::PacketType::Eager, 101), kHdr + 100, kSize, kSelf) !=
          nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Eager, 99), kHdr + 100, kSize, kSelf) !=
          nullptr);
    // A chunk carries data, and as much as it says.
    CHECK(msg::validate_header(good(msg::PacketType::Chunk, 0), kHdr, kSize, kSelf) != nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Chunk, 1 << 20), kHdr + 512, kSize, kSelf) !=
          nullptr);
    // Control packets carry no payload.
    CHECK(msg::validate_header(good(msg::PacketType::Rts, 10), kHdr + 10, kSize, kSelf) != nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Fin), kHdr + 8, kSize, kSelf) != nullptr);
    CHECK(msg::validate_header(good(msg::PacketType::Credit), kHdr + 1, kSize, kSelf) != nullptr);
}

TEST_CASE("negative tags on messages are refused", "[wire]") {
    auto h = good(msg::PacketType::Eager, 0);
    h.tag = -5;
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
    h = good(msg::PacketType::Rts, 100);
    h.tag = -1;
    CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
}

TEST_CASE("each packet type carries only its own protocol flags", "[wire]") {
    auto rts = good(msg::PacketType::Rts, 1 << 20);
    for (uint32_t flags : {0u, msg::kFlagRdmaRead, msg::kFlagRdmaWrite}) {
        rts.flags = flags;
        CHECK(msg::validate_header(rts, kHdr, kSize, kSelf) == nullptr);
    }
    // A request to send offers one protocol, not two, and nothing unknown.
    rts.flags = msg::kFlagRdmaRead | msg::kFlagRdmaWrite;
    CHECK(msg::validate_header(rts, kHdr, kSize, kSelf) != nullptr);
    rts.flags = msg::kFlagInPlace;
    CHECK(msg::validate_header(rts, kHdr, kSize, kSelf) != nullptr);
    rts.flags = 8;
    CHECK(msg::validate_header(rts, kHdr, kSize, kSelf) != nullptr);
    // CTS and FIN may say "write"; nothing else.
    for (auto t : {msg::PacketType::Cts, msg::PacketType::Fin}) {
        auto h = good(t, 100);
        h.flags = msg::kFlagRdmaWrite;
        CHECK(msg::validate_header(h, kHdr, kSize, kSelf) == nullptr);
        h.flags = msg::kFlagRdmaRead;
        CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
    }
    for (auto t : {msg::PacketType::Hello, msg::PacketType::Go, msg::PacketType::Credit}) {
        auto h = good(t);
        h.flags = msg::kFlagRdmaWrite;
        CHECK(msg::validate_header(h, kHdr, kSize, kSelf) != nullptr);
    }
    // A CTS may offer a place; a FIN may not.
    auto place = good(msg::PacketType::Cts, 100);
    place.flags = msg::kFlagInPlace;
    CHECK(msg::validate_header(place, kHdr, kSize, kSelf) == nullptr);
    place.type = msg::PacketType::Fin;
    CHECK(msg::validate_header(place, kHdr, kSize, kSelf) != nullptr);
}

TEST_CASE("a shared copy is offered on a read RTS, granted by a CTS, ended by a write FIN",
          "[wire]") {
    const uint32_t share = msg::kFlagShare;
    auto rts = good(msg::PacketType::Rts, 1 << 20);
    rts.flags = msg::kFlagRdmaRead | share;
    CHECK(msg::validate_header(rts, kHdr, kSize, kSelf) == nullptr);
    for (uint32_t bad : {share, msg::kFlagRdmaWrite | share}) {
        rts.flags = bad;
        CHECK(msg::validate_header(rts, kHdr, kSize, kSelf) != nullptr);
    }
    auto cts = good(msg::PacketType::Cts, 100);
    cts.flags = share;
    CHECK(msg::validate_header(cts, kHdr, kSize, kSelf) == nullptr);
    for (uint32_t bad : {msg::kFlagRdmaWrite | share, msg::kFlagInPlace | share}) {
        cts.flags = bad;
        CHECK(msg::validate_header(cts, kHdr, kSize, kSelf) != nullptr);
    }
    auto fin = good(msg::PacketType::Fin, 100);
    fin.flags = msg::kFlagRdmaWrite | share;
    CHECK(msg::validate_header(fin, kHdr, kSize, kSelf) == nullptr);
    fin.flags = share;
    CHECK(msg::validate_header(fin, kHdr, kSize, kSelf) != nullptr);
    auto chunk = good(msg::PacketType::Chunk, 512);
    chunk.flags = share;
    CHECK(msg::validate_header(chunk, kHdr + 512, kSize, kSelf) != nullptr);
}

TEST_CASE("a chunk's notice that it was copied into place carries no payload", "[wire]") {
    auto notice = good(msg::PacketType::Chunk, 512);
    notice.flags = msg::kFlagInPlace;
    CHECK(msg::validate_header(notice, kHdr, kSize, kSelf) == nullptr);
    CHECK(msg::validate_header(notice, kHdr + 512, kSize, kSelf) != nullptr);  // bytes too
    notice.len = 0;
    CHECK(msg::validate_header(notice, kHdr, kSize, kSelf) != nullptr);  // of nothing
    auto chunk = good(msg::PacketType::Chunk, 512);
    chunk.flags = msg::kFlagRdmaWrite;
    CHECK(msg::validate_header(chunk, kHdr + 512, kSize, kSelf) != nullptr);
}
