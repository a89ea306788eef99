// Addresses arrive from peers through the bootstrap: every length in them is
// checked before any part reaches libfabric (fi_av_insert reads as many bytes
// as the provider's format says, whatever was sent), the doorbell or the
// cross-memory copies; and for verbs, the published address and the hello
// each side of a connection sends.
#include <arpa/inet.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "transport/ofi/fabric_address.hpp"
#include "transport/transport.hpp"
#include "transport/verbs/verbs_address.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

Bytes ipv4_name(uint16_t port) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const auto *p = reinterpret_cast<const uint8_t *>(&sin);
    return Bytes(p, p + sizeof sin);
}

Bytes text_name(const std::string &s) {
    Bytes b(s.begin(), s.end());
    b.push_back(0);
    return b;
}

// Out of line: inlined into a caller whose vectors have known sizes, GCC 12 warns about
// copies on paths those sizes rule out.
[[gnu::noinline]] const char *parse(const Bytes &a, uint32_t format, size_t own_len,
                                    msg::PeerAddress *out) {
    return msg::parse_address(a, format, own_len, 24, out);
}

}  // namespace

TEST_CASE("fabric names of the wrong length for the provider's format are refused",
          "[peer_address]") {
    msg::PeerAddress pa;
    const Bytes v4 = ipv4_name(4000);
    REQUIRE(parse(msg::pack_address(v4, {}, {}), FI_SOCKADDR_IN, v4.size(), &pa) == nullptr);
    CHECK(pa.name == v4);
    CHECK(pa.blob.empty());
    CHECK(pa.bell.empty());
    // Shorter and longer than an IPv4 address, with consistent framing around them.
    for (size_t len : {size_t{1}, size_t{2}, size_t{8}, size_t{15}, size_t{17}, size_t{28}}) {
        INFO("fabric name of " << len << " bytes");
        Bytes name = v4;
        name.resize(len, 0);
        CHECK(parse(msg::pack_address(name, {}, {}), FI_SOCKADDR_IN, v4.size(), &pa) != nullptr);
        CHECK(parse(msg::pack_address(name, {}, {}), FI_SOCKADDR, v4.size(), &pa) != nullptr);
    }
    Bytes v6_family = v4;
    v6_family[0] = AF_INET6;  // IPv6 family in an IPv4-sized name: fi_av_insert would read 28
    CHECK(parse(msg::pack_address(v6_family, {}, {}), FI_SOCKADDR, v4.size(), &pa) != nullptr);
    // Fixed-size formats other than IP: exactly the provider's size.
    CHECK(parse(msg::pack_address(Bytes(32, 1), {}, {}), FI_ADDR_IB_UD, 32, &pa) == nullptr);
    CHECK(parse(msg::pack_address(Bytes(31, 1), {}, {}), FI_ADDR_IB_UD, 32, &pa) != nullptr);
    CHECK(parse(msg::pack_address(Bytes(33, 1), {}, {}), FI_ADDR_IB_UD, 32, &pa) != nullptr);
}

TEST_CASE("string fabric names must end in their NUL and be text", "[peer_address]") {
    msg::PeerAddress pa;
    const Bytes good = text_name("viaduct-1234-0011223344556677");
    REQUIRE(parse(msg::pack_address(good, {}, {}), FI_ADDR_STR, 20, &pa) == nullptr);
    Bytes unterminated = good;
    unterminated.back() = 'x';
    CHECK(parse(msg::pack_address(unterminated, {}, {}), FI_ADDR_STR, 20, &pa) != nullptr);
    Bytes early_nul = good;
    early_nul[3] = 0;
    CHECK(parse(msg::pack_address(early_nul, {}, {}), FI_ADDR_STR, 20, &pa) != nullptr);
    CHECK(parse(msg::pack_address(text_name(std::string(300, 'a')), {}, {}), FI_ADDR_STR, 20,
                &pa) != nullptr);
}

TEST_CASE("addresses whose lengths run past their end are refused", "[peer_address]") {
    msg::PeerAddress pa;
    const Bytes v4 = ipv4_name(4000);
    const Bytes whole = msg::pack_address(v4, Bytes(24, 7), {'a', 'b'});
    REQUIRE(parse(whole, FI_SOCKADDR_IN, v4.size(), &pa) == nullptr);
    CHECK(pa.blob.size() == 24);
    CHECK(pa.bell == Bytes{'a', 'b'});
    for (size_t cut = 0; cut < 3 + v4.size() + 24; ++cut) {
        INFO("cut to " << cut << " bytes");
        Bytes a(whole.begin(), whole.begin() + static_cast<long>(cut));
        CHECK(parse(a, FI_SOCKADDR_IN, v4.size(), &pa) != nullptr);
    }
    Bytes bad_blob = msg::pack_address(v4, Bytes(10, 7), {});
    CHECK(parse(bad_blob, FI_SOCKADDR_IN, v4.size(), &pa) != nullptr);
    CHECK(parse({}, FI_SOCKADDR_IN, v4.size(), &pa) != nullptr);
}

TEST_CASE("an ofi transport refuses a peer address too short for its provider", "[peer_address]") {
    const std::string provider = GENERATE(as<std::string>{}, "tcp;ofi_rxm", "shm");
    INFO("provider " << provider);
    std::string why;
    auto a = msg::open_ofi_transport({.provider = provider}, &why);
    auto b = msg::open_ofi_transport({.provider = provider}, &why);
    if (!a || !b) {
        WARN("provider " << provider << " unavailable here: " << why);
        return;
    }
    // A well-formed pair connects.
    REQUIRE(a->connect({a->address(), b->address()}) == 0);
    // The peer's fabric name cut short, its framing made consistent with the cut.
    auto c = msg::open_ofi_transport({.provider = provider}, &why);
    REQUIRE(c);
    const Bytes real = b->address();
    const size_t len = real[0] | (static_cast<size_t>(real[1]) << 8);
    REQUIRE(len > 4);
    // Length, the name less its last 4 bytes, no cross-memory blob, no doorbell.
    Bytes cut(2 + (len - 4) + 1, 0);
    cut[0] = static_cast<uint8_t>(len - 4);
    std::memcpy(cut.data() + 2, real.data() + 2, len - 4);
    CHECK(c->connect({c->address(), cut}) == -EINVAL);
}

TEST_CASE("verbs addresses and hellos are checked before use", "[peer_address]") {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(7471);
    inet_pton(AF_INET, "192.0.2.7", &sin.sin_addr);
    const Bytes good = msg::pack_verbs_address(sin);
    sockaddr_in out{};
    REQUIRE(msg::parse_verbs_address(good, &out) == nullptr);
    CHECK(out.sin_addr.s_addr == sin.sin_addr.s_addr);
    CHECK(out.sin_port == sin.sin_port);
    for (size_t len : {size_t{0}, size_t{4}, size_t{9}, size_t{11}, size_t{64}}) {
        Bytes a = good;
        a.resize(len, 0);
        CHECK(msg::parse_verbs_address(a, &out) != nullptr);
    }
    Bytes no_port = good;
    no_port[8] = no_port[9] = 0;
    CHECK(msg::parse_verbs_address(no_port, &out) != nullptr);
    Bytes bad_magic = good;
    bad_magic[0] = 'X';
    CHECK(msg::parse_verbs_address(bad_magic, &out) != nullptr);

    auto hello = [](uint32_t magic, uint32_t rank, uint32_t size, size_t pad) {
        msg::ConnectHello h{magic, rank, size};
        Bytes b(sizeof h + pad, 0);
        std::memcpy(b.data(), &h, sizeof h);
        return b;
    };
    msg::ConnectHello h{};
    CHECK(msg::check_hello(hello(msg::kHelloMagic, 2, 4, 0), 4, &h) == nullptr);
    CHECK(h.rank == 2);
    // IB pads a connection reply's private data: padding is fine.
    CHECK(msg::check_hello(hello(msg::kHelloMagic, 3, 4, 184), 4, &h) == nullptr);
    Bytes short_hello = hello(msg::kHelloMagic, 1, 4, 0);
    short_hello.resize(8);
    CHECK(msg::check_hello(short_hello, 4, &h) != nullptr);
    CHECK(msg::check_hello({}, 4, &h) != nullptr);
    CHECK(msg::check_hello(hello(msg::kHelloMagic, 4, 4, 0), 4, &h) != nullptr);
    CHECK(msg::check_hello(hello(msg::kHelloMagic, UINT32_MAX, 4, 0), 4, &h) != nullptr);
    CHECK(msg::check_hello(hello(msg::kHelloMagic, 1, 5, 0), 4, &h) != nullptr);
    CHECK(msg::check_hello(hello(0x12345678, 1, 4, 0), 4, &h) != nullptr);
}
