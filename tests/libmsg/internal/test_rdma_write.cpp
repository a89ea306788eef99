// The RDMA WRITE rendezvous inside the engine, against a scripted transport: what the sender
// writes and when it sends FIN, what the receiver offers in its CTS, every CTS and FIN field
// checked before use, the fall-backs to chunks, restricted mode's slots and peer failure.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <vector>

#include "protocol/long_protocol.hpp"
#include "scripted_transport.hpp"

namespace {

using msg::PacketType;
using scripted::header;
using scripted::settle;

constexpr int kWriteTag = 9;

msg::EngineOptions write_options(bool restricted = false) {
    msg::EngineOptions o;
    o.long_protocol = MSG_PROTOCOL_RDMA_WRITE;
    o.restricted = restricted;
    o.eager_max = 1024;
    o.buffer_size = 16384;
    o.credits = 64;  // the test never returns credit
    return o;
}

std::vector<char> write_pattern(size_t n, int seed) {
    std::vector<char> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed)) >> 3);
    return v;
}

struct WriteJob {
    explicit WriteJob(int size = 2, bool restricted = false)
        : engine(&transport, 0, size, write_options(restricted)) {
        REQUIRE(engine.init() == MSG_OK);
    }
    uint64_t bad() const { return engine.stats().bad_headers; }

    scripted::Transport transport;
    msg::Engine engine;
    scripted::Sink sink;
};

// The CTS a receiver on `src` would send for send `send_id`.
msg::WireHeader write_cts(int src, uint64_t send_id, uint64_t recv_id, uint64_t len,
                          const void *target) {
    msg::WireHeader h = header(PacketType::Cts, src);
    h.flags = msg::kFlagRdmaWrite;
    h.send_id = send_id;
    h.recv_id = recv_id;
    h.len = len;
    h.offset = reinterpret_cast<uint64_t>(target);
    h.key = 0x77;
    return h;
}

msg::WireHeader write_rts(int src, uint64_t send_id, uint64_t len) {
    msg::WireHeader h = header(PacketType::Rts, src);
    h.flags = msg::kFlagRdmaWrite;
    h.tag = kWriteTag;
    h.send_id = send_id;
    h.len = len;
    return h;
}

msg::WireHeader write_fin(int src, uint64_t send_id, uint64_t recv_id, uint64_t len) {
    msg::WireHeader h = header(PacketType::Fin, src);
    h.flags = msg::kFlagRdmaWrite;
    h.send_id = send_id;
    h.recv_id = recv_id;
    h.len = len;
    return h;
}

}  // namespace

TEST_CASE("a sender writes the accepted bytes in pieces, a few at a time, then sends FIN",
          "[rdma_write]") {
    WriteJob job;
    auto &t = job.transport;
    const size_t len = 20 * t.piece + 5;
    const auto data = write_pattern(len, 1);
    REQUIRE(job.engine.isend(1, kWriteTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    auto offers = t.of_type(PacketType::Rts);
    REQUIRE(offers.size() == 1);
    CHECK(offers[0].hdr.flags == msg::kFlagRdmaWrite);
    CHECK(offers[0].hdr.len == len);
    const uint64_t send_id = offers[0].hdr.send_id;

    // The receiver takes fewer bytes than were sent: only those are written.
    const size_t accepted = 9 * t.piece + 3;
    std::vector<char> target(accepted, 0);
    t.deliver(write_cts(1, send_id, 4242, accepted, target.data()));
    settle(job.engine);
    CHECK(job.bad() == 0);
    CHECK(t.writes_in_flight() == static_cast<size_t>(msg::kRmaInFlight));
    for (const auto &w : t.writes) {
        CHECK(w.peer == 1);
        CHECK(w.key == 0x77);
        CHECK(w.len <= t.piece);
        // Each piece is aimed at the same offset in the target as it has in the message.
        CHECK(w.remote - reinterpret_cast<uint64_t>(target.data()) ==
              static_cast<uint64_t>(w.local - data.data()));
    }
    // Completing writes in any order keeps at most kRmaInFlight posted and sends no FIN early.
    while (t.writes_in_flight() > 0) {
        CHECK(t.of_type(PacketType::Fin).empty());
        CHECK(job.sink.got.empty());
        size_t last = t.writes.size() - 1;
        while (t.writes[last].done) --last;
        t.finish_write(last);
        settle(job.engine);
        CHECK(t.writes_in_flight() <= static_cast<size_t>(msg::kRmaInFlight));
    }
    size_t written = 0;
    for (const auto &w : t.writes) written += w.len;
    CHECK(written == accepted);
    CHECK(t.writes.size() == 10);
    CHECK(std::equal(target.begin(), target.end(), data.begin()));

    auto fins = t.of_type(PacketType::Fin);
    REQUIRE(fins.size() == 1);
    CHECK(fins[0].hdr.flags == msg::kFlagRdmaWrite);
    CHECK(fins[0].hdr.send_id == send_id);
    CHECK(fins[0].hdr.recv_id == 4242);
    CHECK(fins[0].hdr.len == accepted);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_SEND);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == accepted);
}

TEST_CASE("a CTS whose length, range, flags or request do not fit is dropped and counted",
          "[rdma_write]") {
    WriteJob job;
    auto &t = job.transport;
    const size_t len = 3 * t.piece;
    const auto data = write_pattern(len, 2);
    REQUIRE(job.engine.isend(1, kWriteTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    const uint64_t send_id = t.of_type(PacketType::Rts).at(0).hdr.send_id;
    std::vector<char> target(len);

    struct Bad {
        const char *what;
        msg::WireHeader h;
    };
    std::vector<Bad> cases = {
        {"unknown send", write_cts(1, send_id + 100, 1, len, target.data())},
        {"more bytes than the message", write_cts(1, send_id, 1, len + 1, target.data())},
        {"a range that wraps",
         write_cts(1, send_id, 1, 100, reinterpret_cast<void *>(UINT64_MAX - 10))},
        {"a write target for no bytes", write_cts(1, send_id, 1, 0, target.data())},
        {"both protocols' flags", write_cts(1, send_id, 1, len, target.data())},
    };
    cases[4].h.flags = msg::kFlagRdmaWrite | msg::kFlagRdmaRead;
    uint64_t bad = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO(cases[i].what);
        t.deliver(cases[i].h);
        settle(job.engine);
        CHECK(job.bad() == ++bad);
        CHECK(t.writes.empty());
    }
    // The real CTS is still taken, and a second one is not.
    t.deliver(write_cts(1, send_id, 7, len, target.data()));
    settle(job.engine);
    CHECK(job.bad() == bad);
    const size_t posted = t.writes.size();
    CHECK(posted == 3);
    t.deliver(write_cts(1, send_id, 7, len, target.data()));
    settle(job.engine);
    CHECK(job.bad() == bad + 1);
    CHECK(t.writes.size() == posted);
    for (size_t i = 0; i < posted; ++i) t.finish_write(i);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == len);
}

TEST_CASE("a receiver offers its buffer in the CTS and completes on a FIN that fits",
          "[rdma_write]") {
    WriteJob job;
    auto &t = job.transport;
    const size_t capacity = 5000, len = 12000;
    std::vector<char> buf(capacity, 0);
    REQUIRE(job.engine.irecv(1, kWriteTag, buf.data(), capacity, &job.sink, nullptr) == MSG_OK);
    t.deliver(write_rts(1, 900, len));
    settle(job.engine);
    auto grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 1);
    const msg::WireHeader &g = grants[0].hdr;
    CHECK(g.flags == msg::kFlagRdmaWrite);
    CHECK(g.send_id == 900);
    CHECK(g.len == capacity);  // truncated: the receiver takes what fits
    CHECK(g.offset == reinterpret_cast<uint64_t>(buf.data()));
    CHECK(g.key == scripted::kKey);
    const uint64_t recv_id = g.recv_id;

    // FINs that do not belong, and a chunk (the other protocol), are dropped and counted.
    t.deliver(write_fin(1, 901, recv_id, capacity));                  // another send
    t.deliver(write_fin(1, 900, recv_id + 1, capacity));              // another receive
    t.deliver(write_fin(1, 900, recv_id, capacity - 1));              // not what was accepted
    msg::WireHeader read_fin = write_fin(1, 900, recv_id, capacity);  // the read protocol's FIN
    read_fin.flags = 0;
    t.deliver(read_fin);
    msg::WireHeader chunk = header(PacketType::Chunk, 1);  // whole, at its place
    chunk.send_id = 900;
    chunk.recv_id = recv_id;
    chunk.len = capacity;
    t.deliver(chunk, std::vector<char>(capacity, 'x'));
    settle(job.engine);
    CHECK(job.bad() == 5);
    CHECK(job.sink.got.empty());
    CHECK(std::all_of(buf.begin(), buf.end(), [](char c) { return c == 0; }));

    t.deliver(write_fin(1, 900, recv_id, capacity));
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_RECV);
    CHECK(job.sink.got[0].status == MSG_ERR_TRUNCATED);
    CHECK(job.sink.got[0].bytes == capacity);
    CHECK(job.sink.got[0].source == 1);
    CHECK(job.sink.got[0].tag == kWriteTag);
    // Once complete, a repeated FIN finds nothing.
    t.deliver(write_fin(1, 900, recv_id, capacity));
    settle(job.engine);
    CHECK(job.bad() == 6);
    CHECK(job.sink.got.size() == 1);
}

TEST_CASE("a FIN before the receiver's CTS is dropped", "[rdma_write]") {
    WriteJob job(3, true);
    auto &t = job.transport;
    std::vector<char> a(4000), b(4000);
    REQUIRE(job.engine.irecv(1, kWriteTag, a.data(), a.size(), &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(2, kWriteTag, b.data(), b.size(), &job.sink, nullptr) == MSG_OK);
    t.deliver(write_rts(1, 10, 4000));
    t.deliver(write_rts(2, 20, 4000));
    settle(job.engine);
    // Restricted: one receive moves data at a time, so rank 2 has no CTS yet.
    auto grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 1);
    CHECK(grants[0].peer == 1);
    // Rank 2 guesses the next receive id; without a CTS its FIN is not taken.
    t.deliver(write_fin(2, 20, grants[0].hdr.recv_id + 1, 4000));
    settle(job.engine);
    CHECK(job.bad() == 1);
    CHECK(job.sink.got.empty());
    // A FIN for rank 1's receive, but sent by rank 2, is not taken either.
    t.deliver(write_fin(2, 10, grants[0].hdr.recv_id, 4000));
    settle(job.engine);
    CHECK(job.bad() == 2);

    t.deliver(write_fin(1, 10, grants[0].hdr.recv_id, 4000));
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].source == 1);
    // The receive slot passed to rank 2's receive.
    grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 2);
    CHECK(grants[1].peer == 2);
    t.deliver(write_fin(2, 20, grants[1].hdr.recv_id, 4000));
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[1].status == MSG_OK);
}

TEST_CASE("restricted senders write one message at a time, in CTS order", "[rdma_write]") {
    WriteJob job(3, true);
    auto &t = job.transport;
    const size_t len = 2 * t.piece;
    const auto data = write_pattern(len, 3);
    REQUIRE(job.engine.isend(1, kWriteTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.isend(2, kWriteTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    auto offers = t.of_type(PacketType::Rts);
    REQUIRE(offers.size() == 2);  // requests to send are never held back
    std::vector<char> to1(len), to2(len);
    t.deliver(write_cts(2, offers[1].hdr.send_id, 5, len, to2.data()));
    t.deliver(write_cts(1, offers[0].hdr.send_id, 6, len, to1.data()));
    // A CTS naming rank 2's send but coming from rank 1 is refused.
    t.deliver(write_cts(1, offers[1].hdr.send_id, 6, len, to1.data()));
    settle(job.engine);
    CHECK(job.bad() == 1);
    // Only the first CTS's send moves data.
    REQUIRE(t.writes.size() == 2);
    for (const auto &w : t.writes) CHECK(w.peer == 2);
    t.finish_write(0);
    t.finish_write(1);
    settle(job.engine);
    // Rank 2's FIN went out, its send completed, and rank 1's writes started.
    REQUIRE(t.of_type(PacketType::Fin).size() == 1);
    CHECK(t.of_type(PacketType::Fin)[0].peer == 2);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].source == 2);
    REQUIRE(t.writes.size() == 4);
    CHECK(t.writes[2].peer == 1);
    t.finish_write(2);
    t.finish_write(3);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[1].source == 1);
    CHECK(to1 == data);
    CHECK(to2 == data);
}

TEST_CASE("without a write target both sides fall back to chunks", "[rdma_write]") {
    WriteJob job;
    auto &t = job.transport;
    const size_t chunk = job.engine.chunk_payload();

    SECTION("the receiver cannot register its buffer for remote writes") {
        t.refuse_access = msg::kRemoteWrite;
        const size_t len = chunk + 100;
        const auto data = write_pattern(len, 4);
        std::vector<char> buf(len, 0);
        REQUIRE(job.engine.irecv(1, kWriteTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
        t.deliver(write_rts(1, 30, len));
        settle(job.engine);
        auto grants = t.of_type(PacketType::Cts);
        REQUIRE(grants.size() == 1);
        CHECK(grants[0].hdr.flags == 0);
        CHECK(grants[0].hdr.len == len);
        // The sender then streams chunks, which are taken.
        for (size_t off = 0; off < len; off += chunk) {
            msg::WireHeader h = header(PacketType::Chunk, 1);
            h.send_id = 30;
            h.recv_id = grants[0].hdr.recv_id;
            h.offset = off;
            h.len = std::min(chunk, len - off);
            t.deliver(h, std::vector<char>(data.begin() + static_cast<long>(off),
                                           data.begin() + static_cast<long>(off + h.len)));
        }
        settle(job.engine);
        CHECK(job.bad() == 0);
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].status == MSG_OK);
        CHECK(buf == data);
    }

    SECTION("a receive truncated to nothing completes at once, as with send/recv") {
        REQUIRE(job.engine.irecv(1, kWriteTag, nullptr, 0, &job.sink, nullptr) == MSG_OK);
        t.deliver(write_rts(1, 31, 50000));
        settle(job.engine);
        auto grants = t.of_type(PacketType::Cts);
        REQUIRE(grants.size() == 1);
        CHECK(grants[0].hdr.flags == 0);
        CHECK(grants[0].hdr.len == 0);
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].status == MSG_ERR_TRUNCATED);
        CHECK(job.sink.got[0].bytes == 0);
    }

    SECTION("a sender given a plain CTS streams chunks") {
        const size_t len = 2 * chunk;
        const auto data = write_pattern(len, 5);
        REQUIRE(job.engine.isend(1, kWriteTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
        settle(job.engine);
        msg::WireHeader h =
            write_cts(1, t.of_type(PacketType::Rts).at(0).hdr.send_id, 8, len, nullptr);
        h.flags = 0;
        h.offset = 0;
        t.deliver(h);
        settle(job.engine);
        CHECK(t.writes.empty());
        auto chunks = t.of_type(PacketType::Chunk);
        REQUIRE(chunks.size() == 2);
        CHECK(chunks[0].payload ==
              std::vector<char>(data.begin(), data.begin() + static_cast<long>(chunk)));
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].status == MSG_OK);
        CHECK(job.sink.got[0].bytes == len);
    }
}

TEST_CASE("a failed write or a failed peer ends both sides with MSG_ERR_PEER_FAILED",
          "[rdma_write]") {
    WriteJob job(3);
    auto &t = job.transport;
    const size_t len = 3 * t.piece;
    const auto data = write_pattern(len, 6);
    std::vector<char> target(len), buf(len);
    REQUIRE(job.engine.isend(1, kWriteTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(2, kWriteTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    t.deliver(write_cts(1, t.of_type(PacketType::Rts).at(0).hdr.send_id, 3, len, target.data()));
    t.deliver(write_rts(2, 40, len));
    settle(job.engine);
    REQUIRE(t.writes.size() == 3);
    REQUIRE(t.of_type(PacketType::Cts).size() == 1);

    // A write fails: the sender's peer is lost, and later completions of its writes are ignored.
    t.finish_write(0);
    t.finish_write(1, EIO);
    t.finish_write(2);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_SEND);
    CHECK(job.sink.got[0].status == MSG_ERR_PEER_FAILED);
    CHECK(t.of_type(PacketType::Fin).empty());
    CHECK(job.engine.peer_failed(1));

    // The writer of a receive dies before its FIN: the receive fails, it does not hang.
    job.engine.fail_peer(2);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[1].op == MSG_OP_RECV);
    CHECK(job.sink.got[1].status == MSG_ERR_PEER_FAILED);
    CHECK(job.engine.stats().peers_failed == 2);
    CHECK(job.engine.ops_in_flight() == 0);
}
