// The shm transport's ring and registration table: packets wrap round the
// ring's end intact, a full ring says so and frees with the consumer, a
// length or index no producer could have written stops the ring, and a
// cross-memory range outside a registration is refused.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "transport/shm/region.hpp"
#include "transport/shm/registrations.hpp"
#include "transport/shm/ring.hpp"
#include "transport/shm/shm_address.hpp"
#include "transport/transport.hpp"

namespace {

using msg::RingReader;
using msg::RingWriter;
using Status = msg::RingReader::Status;

// A ring of `cells` cells in ordinary memory, with both its ends.
struct TestRing {
    explicit TestRing(size_t cells) : bytes(cells * msg::kRingCell), count(cells) {
        writer = RingWriter(&indices, bytes.data(), count);
        reader = RingReader(&indices, bytes.data(), count);
    }
    int push(const std::vector<unsigned char> &packet) {
        iovec iov{const_cast<unsigned char *>(packet.data()), packet.size()};
        return writer.push(&iov, 1);
    }
    msg::RingIndices indices;
    std::vector<unsigned char> bytes;
    size_t count;
    RingWriter writer;
    RingReader reader;
};

std::vector<unsigned char> packet(size_t len, unsigned seed) {
    std::vector<unsigned char> p(len);
    for (size_t i = 0; i < len; ++i) p[i] = static_cast<unsigned char>(seed * 31 + i * 7);
    return p;
}

}  // namespace

TEST_CASE("packets of every size wrap round the ring's end intact", "[shm_ring]") {
    TestRing ring(8);  // 512 bytes: most packets straddle the end sooner or later
    std::vector<unsigned char> got(1024);
    for (unsigned i = 0; i < 2000; ++i) {
        const auto p = packet(i % 300, i);
        REQUIRE(ring.push(p) == 0);
        size_t len = 0;
        REQUIRE(ring.reader.pop(got.data(), got.size(), &len) == Status::Packet);
        REQUIRE(len == p.size());
        REQUIRE(std::memcmp(got.data(), p.data(), len) == 0);
    }
    size_t len = 0;
    CHECK(ring.reader.pop(got.data(), got.size(), &len) == Status::Empty);
}

TEST_CASE("a header and a payload go as one packet", "[shm_ring]") {
    TestRing ring(8);
    const auto head = packet(40, 1), body = packet(100, 2);
    iovec iov[2] = {{const_cast<unsigned char *>(head.data()), head.size()},
                    {const_cast<unsigned char *>(body.data()), body.size()}};
    REQUIRE(ring.writer.push(iov, 2) == 0);
    std::vector<unsigned char> got(200);
    size_t len = 0;
    REQUIRE(ring.reader.pop(got.data(), got.size(), &len) == Status::Packet);
    REQUIRE(len == 140);
    CHECK(std::memcmp(got.data(), head.data(), 40) == 0);
    CHECK(std::memcmp(got.data() + 40, body.data(), 100) == 0);
}

TEST_CASE("a full ring refuses until the consumer frees room", "[shm_ring]") {
    TestRing ring(8);
    const auto p = packet(100, 3);  // two cells each
    for (int i = 0; i < 4; ++i) REQUIRE(ring.push(p) == 0);
    CHECK(ring.push(p) == -EAGAIN);
    CHECK(ring.push(packet(8 * msg::kRingCell, 4)) == -EMSGSIZE);  // never fits
    std::vector<unsigned char> got(128);
    size_t len = 0;
    REQUIRE(ring.reader.pop(got.data(), got.size(), &len) == Status::Packet);
    CHECK(ring.push(p) == 0);
    CHECK(ring.push(p) == -EAGAIN);
}

TEST_CASE("a packet longer than the receive buffer fills it and no more", "[shm_ring]") {
    TestRing ring(8);
    REQUIRE(ring.push(packet(200, 5)) == 0);
    std::vector<unsigned char> got(64, 0xee);
    size_t len = 0;
    REQUIRE(ring.reader.pop(got.data(), 32, &len) == Status::Packet);
    CHECK(len == 200);
    CHECK(got[32] == 0xee);
}

TEST_CASE("lengths and indices no producer could write stop the ring", "[shm_ring]") {
    std::vector<unsigned char> got(4096);
    size_t len = 0;
    SECTION("a length past the cells published") {
        TestRing ring(8);
        REQUIRE(ring.push(packet(10, 6)) == 0);
        const uint64_t lie = 300;  // five cells, one published
        std::memcpy(ring.bytes.data(), &lie, sizeof lie);
        CHECK(ring.reader.pop(got.data(), got.size(), &len) == Status::Broken);
    }
    SECTION("a length that would wrap the cell count") {
        TestRing ring(8);
        REQUIRE(ring.push(packet(10, 7)) == 0);
        const uint64_t lie = UINT64_MAX - 3;
        std::memcpy(ring.bytes.data(), &lie, sizeof lie);
        CHECK(ring.reader.pop(got.data(), got.size(), &len) == Status::Broken);
    }
    SECTION("more cells published than the ring has") {
        TestRing ring(8);
        ring.indices.head.store(9);
        CHECK(ring.reader.pop(got.data(), got.size(), &len) == Status::Broken);
    }
    SECTION("a broken ring stays broken") {
        TestRing ring(8);
        ring.indices.head.store(1000);
        CHECK(ring.reader.pop(got.data(), got.size(), &len) == Status::Broken);
        ring.indices.head.store(0);
        CHECK(ring.reader.pop(got.data(), got.size(), &len) == Status::Broken);
    }
    SECTION("a consumer index ahead of the producer's") {
        TestRing ring(8);
        for (int i = 0; i < 4; ++i) REQUIRE(ring.push(packet(100, 8)) == 0);
        ring.indices.tail.store(100);
        CHECK(ring.push(packet(100, 9)) == -EPROTO);
    }
}

TEST_CASE("one producer and one consumer thread move 200,000 packets in order",
          "[shm_ring_threads]") {
    TestRing ring(64);
    constexpr unsigned kPackets = 200000;
    std::thread producer([&] {
        for (unsigned i = 0; i < kPackets;) {
            const auto p = packet(4 + i % 500, i);
            if (ring.push(p) == 0)
                ++i;
            else
                std::this_thread::yield();
        }
    });
    std::vector<unsigned char> got(1024);
    unsigned bad = 0;
    for (unsigned i = 0; i < kPackets;) {
        size_t len = 0;
        const Status s = ring.reader.pop(got.data(), got.size(), &len);
        REQUIRE(s != Status::Broken);
        if (s == Status::Empty) {
            std::this_thread::yield();
            continue;
        }
        const auto want = packet(4 + i % 500, i);
        if (len != want.size() || std::memcmp(got.data(), want.data(), len) != 0) ++bad;
        ++i;
    }
    producer.join();
    CHECK(bad == 0);
}

TEST_CASE("cross-memory ranges must lie inside a registration of the right direction",
          "[shm_ring]") {
    const std::string name = "/viaduct-" + std::to_string(getpid()) + "-shm-test";
    auto region = std::make_shared<msg::ShmRegion>();
    std::string why;
    REQUIRE(region->create(name, 2, 16, &why) == 0);
    msg::ShmRegistrationTable table(region);
    std::vector<char> buf(4096);
    const auto base = reinterpret_cast<uint64_t>(buf.data());
    const uint64_t key = table.add(buf.data(), buf.size(), msg::kRemoteRead);
    REQUIRE(key != 0);
    CHECK(msg::shm_registration_covers(*region, key, base, 4096, msg::kRemoteRead));
    CHECK(msg::shm_registration_covers(*region, key, base + 100, 3996, msg::kRemoteRead));
    CHECK_FALSE(msg::shm_registration_covers(*region, key, base + 100, 3997, msg::kRemoteRead));
    CHECK_FALSE(msg::shm_registration_covers(*region, key, base - 1, 10, msg::kRemoteRead));
    CHECK_FALSE(msg::shm_registration_covers(*region, key, base + 8, UINT64_MAX, msg::kRemoteRead));
    CHECK_FALSE(msg::shm_registration_covers(*region, key, base, 10, msg::kRemoteWrite));
    CHECK_FALSE(msg::shm_registration_covers(*region, key + msg::kShmRegistrations, base, 10,
                                             msg::kRemoteRead));
    CHECK_FALSE(msg::shm_registration_covers(*region, 0, base, 10, msg::kRemoteRead));
    table.remove(key);
    CHECK_FALSE(msg::shm_registration_covers(*region, key, base, 10, msg::kRemoteRead));

    // A peer's view: only a region of this job's shape is attached.
    msg::ShmRegion peer, wrong;
    CHECK(peer.attach(name, 2, 16, &why) == 0);
    CHECK(wrong.attach(name, 3, 16, &why) != 0);
}

TEST_CASE("shm addresses naming other paths are refused", "[shm_ring]") {
    msg::PeerAddress out;
    std::string region;
    const std::vector<uint8_t> blob(24, 1), bell = {'a', 'b'};
    auto good = msg::pack_shm_address("/viaduct-12-shm-00ff", blob, bell);
    CHECK(msg::parse_shm_address(good, 24, &out, &region) == nullptr);
    CHECK(region == "/viaduct-12-shm-00ff");
    CHECK(out.bell == bell);
    CHECK(msg::parse_shm_address(msg::pack_shm_address("/viaduct-../x", blob, bell), 24, &out,
                                 &region));
    CHECK(msg::parse_shm_address(msg::pack_shm_address("/etc/passwd", blob, bell), 24, &out,
                                 &region));
    CHECK(msg::parse_shm_address(msg::pack_shm_address("/viaduct-1", {1, 2}, bell), 24, &out,
                                 &region));
    good.resize(10);  // the name runs past the end
    CHECK(msg::parse_shm_address(good, 24, &out, &region));
}
