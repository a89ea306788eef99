// The bootstrap frames' decoders: malformed bodies from either side are refused
// before any rank, count or length in them is used.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "bootstrap/frame.hpp"
#include "bootstrap/messages.hpp"

using namespace msg::boot;

namespace {

std::vector<uint8_t> u32s(std::initializer_list<uint32_t> vs) {
    std::vector<uint8_t> b;
    for (uint32_t v : vs) put_u32(b, v);
    return b;
}

GatherResult three_entries() {
    GatherResult g;
    g.seq = 7;
    g.present = {true, false, true};
    g.data = {{1, 2, 3}, {}, {9}};
    return g;
}

}  // namespace

TEST_CASE("well-formed bodies decode to what was encoded", "[boot_messages]") {
    Hello h;
    h.rank = 2;
    h.size = 3;
    Hello hd;
    REQUIRE(decode_hello(encode_hello(h), &hd) == nullptr);
    CHECK(hd.rank == 2);
    CHECK(hd.size == 3);

    GatherResult g;
    REQUIRE(decode_gather_result(encode_gather_result(three_entries()), 3, &g) == nullptr);
    CHECK(g.seq == 7);
    CHECK(g.present == std::vector<bool>{true, false, true});
    CHECK(g.data == three_entries().data);

    int r = -1;
    REQUIRE(decode_failed(encode_failed(2), 3, &r) == nullptr);
    CHECK(r == 2);

    uint32_t seq = 0;
    std::vector<uint8_t> data;
    REQUIRE(decode_gather(encode_gather(5, {4, 5}), &seq, &data) == nullptr);
    CHECK(seq == 5);
    CHECK(data == std::vector<uint8_t>{4, 5});
    REQUIRE(decode_seq(encode_seq(9), &seq) == nullptr);
    CHECK(seq == 9);
}

TEST_CASE("Failed frames naming a rank outside the job are refused", "[boot_messages]") {
    int r = 12345;
    // A negative rank arrives as a large u32: it must not become a negative index.
    CHECK(decode_failed(u32s({0xFFFFFFFFu}), 4, &r) != nullptr);
    CHECK(decode_failed(u32s({0x80000000u}), 4, &r) != nullptr);
    CHECK(decode_failed(u32s({4}), 4, &r) != nullptr);
    CHECK(decode_failed(u32s({3, 0}), 4, &r) != nullptr);  // trailing bytes
    CHECK(decode_failed({1, 0, 0}, 4, &r) != nullptr);     // short
    CHECK(decode_failed({}, 4, &r) != nullptr);
    CHECK(r == 12345);  // untouched on refusal
}

TEST_CASE("Hello frames with an impossible rank or size are refused", "[boot_messages]") {
    // rank, size, then the rank's nonce and proof (64 bytes).
    auto hello = [](uint32_t rank, uint32_t size) {
        std::vector<uint8_t> b = u32s({rank, size});
        b.resize(72, 0x11);
        return b;
    };
    Hello h;
    REQUIRE(decode_hello(hello(1, 3), &h) == nullptr);
    CHECK(h.nonce[0] == 0x11);
    CHECK(decode_hello(hello(3, 3), &h) != nullptr);            // rank == size
    CHECK(decode_hello(hello(0xFFFFFFFFu, 4), &h) != nullptr);  // "-1"
    CHECK(decode_hello(hello(0, 0), &h) != nullptr);            // empty job
    CHECK(decode_hello(hello(0, kMaxJobSize + 1), &h) != nullptr);
    CHECK(decode_hello(u32s({0, 4}), &h) != nullptr);  // no proof of the key
    std::vector<uint8_t> longer = hello(0, 4);
    longer.push_back(0);
    CHECK(decode_hello(longer, &h) != nullptr);
}

TEST_CASE("Challenge and Welcome frames are exactly one nonce or proof", "[boot_messages]") {
    Nonce n;
    Mac m;
    CHECK(decode_challenge(std::vector<uint8_t>(32, 1), &n) == nullptr);
    CHECK(decode_challenge(std::vector<uint8_t>(31, 1), &n) != nullptr);
    CHECK(decode_challenge(std::vector<uint8_t>(33, 1), &n) != nullptr);
    CHECK(decode_welcome(std::vector<uint8_t>(32, 1), &m) == nullptr);
    CHECK(decode_welcome({}, &m) != nullptr);
}

TEST_CASE("GatherResult frames whose counts or lengths lie are refused", "[boot_messages]") {
    const std::vector<uint8_t> good = encode_gather_result(three_entries());
    GatherResult g;
    SECTION("a rank count other than the job size") {
        CHECK(decode_gather_result(good, 4, &g) != nullptr);
        CHECK(decode_gather_result(good, 2, &g) != nullptr);
        CHECK(decode_gather_result(good, 0, &g) != nullptr);
    }
    SECTION("a huge rank count with no entries behind it") {
        CHECK(decode_gather_result(u32s({0, 0xFFFFFFFFu}), 3, &g) != nullptr);
    }
    SECTION("an entry length that runs past the frame") {
        std::vector<uint8_t> b = u32s({0, 1});
        b.push_back(1);
        put_u32(b, 0xFFFFFFF0u);  // pos + len would wrap a 32-bit sum
        b.push_back(42);
        CHECK(decode_gather_result(b, 1, &g) != nullptr);
    }
    SECTION("a present flag other than 0 or 1") {
        std::vector<uint8_t> b = good;
        b[8] = 2;
        CHECK(decode_gather_result(b, 3, &g) != nullptr);
    }
    SECTION("every truncation of a good frame, and a byte too many") {
        for (size_t n = 0; n < good.size(); ++n) {
            std::vector<uint8_t> b(good.begin(), good.begin() + static_cast<long>(n));
            INFO("truncated to " << n << " bytes");
            CHECK(decode_gather_result(b, 3, &g) != nullptr);
        }
        std::vector<uint8_t> b = good;
        b.push_back(0);
        CHECK(decode_gather_result(b, 3, &g) != nullptr);
    }
}

TEST_CASE("sequence frames are exactly four bytes", "[boot_messages]") {
    uint32_t seq = 0;
    std::vector<uint8_t> data;
    CHECK(decode_seq({}, &seq) != nullptr);
    CHECK(decode_seq({1, 2, 3}, &seq) != nullptr);
    CHECK(decode_seq(u32s({1, 2}), &seq) != nullptr);
    CHECK(decode_gather({1, 2, 3}, &seq, &data) != nullptr);
}

TEST_CASE("Error text is bounded and printable", "[boot_messages]") {
    std::string text;
    std::vector<uint8_t> b = {'o', 'k', 0x1b, '[', '2', 'J', '\n'};
    REQUIRE(decode_error(b, &text) == nullptr);
    CHECK(text == "ok?[2J?");
    CHECK(decode_error(std::vector<uint8_t>(kMaxErrorText + 1, 'x'), &text) != nullptr);
    CHECK(encode_error(std::string(5000, 'y')).size() == kMaxErrorText);
}

TEST_CASE("FrameReader refuses a length prefix beyond its limit", "[boot_messages]") {
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    std::vector<uint8_t> b = u32s({kMaxFrame + 1});
    b.push_back(static_cast<uint8_t>(FrameType::Hello));
    REQUIRE(::write(sv[0], b.data(), b.size()) == static_cast<ssize_t>(b.size()));
    FrameReader reader;
    REQUIRE(reader.fill(sv[1]));
    Frame f;
    CHECK_FALSE(reader.next(f));
    CHECK_FALSE(reader.fill(sv[1]));  // a reader that saw a bad length stays bad
    ::close(sv[0]);
    ::close(sv[1]);
}
