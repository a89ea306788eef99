// The RDMA read rendezvous inside the engine, against a scripted transport: what the sender
// offers in its RTS and how FIN completes it, the receiver's reads (a few at a time, completing
// in any order) and its FIN, restricted mode's CTS and GO turns, and peer failure.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "protocol_script.hpp"

namespace {

using namespace script;

// A job whose transport performs reads (kept until the test completes them).
struct ReadJob : Job {
    explicit ReadJob(int size = 2, bool restricted = false)
        : Job(MSG_PROTOCOL_RDMA, size, restricted) {
        transport.reads_on = true;
    }
};

// Completes every read still in flight, last posted first, until none is left.
void finish_reads_backwards(ReadJob &job) {
    auto &t = job.transport;
    while (t.reads_in_flight() > 0) {
        size_t last = t.reads.size() - 1;
        while (t.reads[last].done) --last;
        t.finish_read(last);
        settle(job.engine);
        CHECK(t.reads_in_flight() <= static_cast<size_t>(msg::kRmaInFlight));
    }
}

}  // namespace

TEST_CASE("a sender offers its registered buffer in the RTS and completes on FIN", "[rdma_read]") {
    ReadJob job;
    auto &t = job.transport;
    const size_t len = 5 * t.piece;
    const auto data = pattern(len, 1);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    auto offers = t.of_type(PacketType::Rts);
    REQUIRE(offers.size() == 1);
    const msg::WireHeader &o = offers[0].hdr;
    CHECK(o.flags == msg::kFlagRdmaRead);
    CHECK(o.len == len);
    CHECK(o.tag == kTag);
    CHECK(o.offset == reinterpret_cast<uint64_t>(data.data()));
    CHECK(o.key == scripted::kKey);
    CHECK(t.registrations == 1);

    // Unrestricted, the receiver reads at once: a CTS is not its, and neither is a FIN that
    // claims more than the message, a write FIN, or one for another send.
    t.deliver(cts(1, o.send_id, 3, len));
    t.deliver(fin(1, o.send_id, 0, len + 1));
    t.deliver(fin(1, o.send_id, 0, len, msg::kFlagRdmaWrite));
    t.deliver(fin(1, o.send_id + 1, 0, len));
    settle(job.engine);
    CHECK(job.bad() == 4);
    CHECK(job.sink.got.empty());

    // The receiver took fewer bytes: the send reports those.
    t.deliver(fin(1, o.send_id, 0, len - 100));
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_SEND);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == len - 100);
    // A repeated FIN finds nothing.
    t.deliver(fin(1, o.send_id, 0, len));
    settle(job.engine);
    CHECK(job.bad() == 5);
    CHECK(job.sink.got.size() == 1);
}

TEST_CASE("a receiver reads the accepted bytes in pieces, a few at a time, then sends FIN",
          "[rdma_read]") {
    ReadJob job;
    auto &t = job.transport;
    const size_t len = 9 * t.piece + 77;
    const auto data = pattern(len, 2);
    std::vector<char> buf(len, 0);
    REQUIRE(job.engine.irecv(1, kTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
    t.deliver(rts(1, 500, len, msg::kFlagRdmaRead, data.data()));
    settle(job.engine);
    CHECK(t.of_type(PacketType::Cts).empty());  // no grant: it reads at once
    CHECK(t.reads_in_flight() == static_cast<size_t>(msg::kRmaInFlight));
    for (const auto &r : t.reads) {
        CHECK(r.peer == 1);
        CHECK(r.key == scripted::kKey);
        CHECK(r.len <= t.piece);
        // Each piece lands at the offset it has in the message.
        CHECK(r.remote - reinterpret_cast<uint64_t>(data.data()) ==
              static_cast<uint64_t>(r.local - buf.data()));
    }
    // Completing reads in any order keeps at most kRmaInFlight posted and sends no FIN early.
    while (t.reads_in_flight() > 0) {
        CHECK(t.of_type(PacketType::Fin).empty());
        CHECK(job.sink.got.empty());
        size_t last = t.reads.size() - 1;
        while (t.reads[last].done) --last;
        t.finish_read(last);
        settle(job.engine);
        CHECK(t.reads_in_flight() <= static_cast<size_t>(msg::kRmaInFlight));
    }
    CHECK(t.reads.size() == 10);
    CHECK(buf == data);
    auto fins = t.of_type(PacketType::Fin);
    REQUIRE(fins.size() == 1);
    CHECK(fins[0].peer == 1);
    CHECK(fins[0].hdr.flags == 0);
    CHECK(fins[0].hdr.send_id == 500);
    CHECK(fins[0].hdr.len == len);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_RECV);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == len);
    CHECK(job.sink.got[0].source == 1);
    CHECK(job.sink.got[0].tag == kTag);
}

TEST_CASE("a read receive takes no chunk, GO or write FIN, and truncates to its capacity",
          "[rdma_read]") {
    ReadJob job;
    auto &t = job.transport;
    const size_t len = 3 * t.piece, capacity = t.piece + 9;
    const auto data = pattern(len, 3);
    std::vector<char> buf(capacity + 32, 'z');
    REQUIRE(job.engine.irecv(1, kTag, buf.data(), capacity, &job.sink, nullptr) == MSG_OK);
    // The RTS arrives after the receive was posted and before any other packet.
    t.deliver(rts(1, 600, len, msg::kFlagRdmaRead, data.data()));
    settle(job.engine);
    REQUIRE(t.reads.size() == 2);
    const uint64_t recv_id = 1;  // the engine's first request (a read receive sends no CTS)

    // Packets of the other protocols naming this receive are refused and move nothing; so is
    // a GO, which only restricted mode sends.
    msg::WireHeader c = header(PacketType::Chunk, 1);
    c.send_id = 600;
    c.recv_id = recv_id;
    c.len = 16;
    t.deliver(c, std::vector<char>(16, 'x'));
    t.deliver(go(1, 600, recv_id));
    t.deliver(fin(1, 600, recv_id, capacity, msg::kFlagRdmaWrite));
    settle(job.engine);
    CHECK(job.bad() == 3);
    CHECK(std::all_of(buf.begin(), buf.end(), [](char ch) { return ch == 'z'; }));

    t.finish_read(1);
    t.finish_read(0);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == MSG_ERR_TRUNCATED);
    CHECK(job.sink.got[0].bytes == capacity);
    CHECK(std::equal(data.begin(), data.begin() + static_cast<long>(capacity), buf.begin()));
    CHECK(std::all_of(buf.begin() + static_cast<long>(capacity), buf.end(),
                      [](char ch) { return ch == 'z'; }));
    REQUIRE(t.of_type(PacketType::Fin).size() == 1);
    CHECK(t.of_type(PacketType::Fin)[0].hdr.len == capacity);
}

TEST_CASE("a read receive of no bytes sends FIN at once; an early RTS waits for its receive",
          "[rdma_read]") {
    ReadJob job;
    auto &t = job.transport;
    const auto data = pattern(4000, 4);
    t.deliver(rts(1, 700, data.size(), msg::kFlagRdmaRead, data.data()));
    settle(job.engine);
    CHECK(t.reads.empty());
    CHECK(job.engine.unexpected_count(1) == 1);
    REQUIRE(job.engine.irecv(1, kTag, nullptr, 0, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    CHECK(t.reads.empty());
    auto fins = t.of_type(PacketType::Fin);
    REQUIRE(fins.size() == 1);
    CHECK(fins[0].hdr.send_id == 700);
    CHECK(fins[0].hdr.len == 0);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == MSG_ERR_TRUNCATED);
    CHECK(job.sink.got[0].bytes == 0);
}

namespace {

// Restricted mode, receiving: two read receives get one CTS at a time, and a read starts only on
// the matching GO.
void restricted_receives(ReadJob &job) {
    auto &t = job.transport;
    const size_t len = 2 * t.piece;
    const auto d1 = pattern(len, 5), d2 = pattern(len, 6);
    std::vector<char> b1(len), b2(len);
    REQUIRE(job.engine.irecv(1, kTag, b1.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(2, kTag, b2.data(), len, &job.sink, nullptr) == MSG_OK);
    t.deliver(rts(1, 10, len, msg::kFlagRdmaRead, d1.data()));
    t.deliver(rts(2, 20, len, msg::kFlagRdmaRead, d2.data()));
    settle(job.engine);
    auto grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 1);  // one receive at a time
    CHECK(grants[0].peer == 1);
    CHECK(grants[0].hdr.flags == 0);
    CHECK(grants[0].hdr.send_id == 10);
    CHECK(grants[0].hdr.len == len);
    CHECK(t.reads.empty());  // not before the sender's GO
    const uint64_t r1 = grants[0].hdr.recv_id;

    // A GO for the waiting receive (no CTS yet), naming another send, or from another
    // rank is refused.
    t.deliver(go(2, 20, r1 + 1));
    t.deliver(go(1, 11, r1));
    t.deliver(go(2, 10, r1));
    settle(job.engine);
    CHECK(job.bad() == 3);
    CHECK(t.reads.empty());

    t.deliver(go(1, 10, r1));
    t.deliver(go(1, 10, r1));  // a second GO would read again over the first
    settle(job.engine);
    CHECK(job.bad() == 4);
    REQUIRE(t.reads.size() == 2);
    t.finish_read(1);
    t.finish_read(0);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(b1 == d1);
    // The slot passed to rank 2's receive.
    grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 2);
    CHECK(grants[1].peer == 2);
    t.deliver(go(2, 20, grants[1].hdr.recv_id));
    settle(job.engine);
    finish_reads_backwards(job);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[1].status == MSG_OK);
    CHECK(b2 == d2);
    CHECK(t.of_type(PacketType::Fin).size() == 2);
}

// Restricted mode, sending: a send answers one CTS at a time, the next GO after the first FIN.
void restricted_sends(ReadJob &job) {
    auto &t = job.transport;
    const size_t len = 2 * t.piece;
    const auto data = pattern(len, 7);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.isend(2, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    auto offers = t.of_type(PacketType::Rts);
    REQUIRE(offers.size() == 2);
    const uint64_t s1 = offers[0].hdr.send_id, s2 = offers[1].hdr.send_id;
    msg::WireHeader target = cts(1, s1, 8, len);
    target.flags = msg::kFlagRdmaWrite;
    target.offset = 64;
    t.deliver(target);  // a read's CTS asks for a turn, it offers no write target
    settle(job.engine);
    CHECK(job.bad() == 1);
    CHECK(t.of_type(PacketType::Go).empty());

    t.deliver(cts(2, s2, 9, len));
    t.deliver(cts(1, s1, 8, len));
    settle(job.engine);
    auto gos = t.of_type(PacketType::Go);
    REQUIRE(gos.size() == 1);  // the send slot is rank 2's until its FIN
    CHECK(gos[0].peer == 2);
    CHECK(gos[0].hdr.send_id == s2);
    CHECK(gos[0].hdr.recv_id == 9);
    t.deliver(fin(2, s2, 0, len));
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].source == 2);
    gos = t.of_type(PacketType::Go);
    REQUIRE(gos.size() == 2);
    CHECK(gos[1].peer == 1);
    CHECK(gos[1].hdr.recv_id == 8);
    t.deliver(fin(1, s1, 0, len));
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[1].bytes == len);
}

}  // namespace

TEST_CASE("restricted: a read receive sends CTS and reads on GO; sends answer one at a time",
          "[rdma_read]") {
    ReadJob job(3, true);

    SECTION("receives") {
        restricted_receives(job);
    }
    SECTION("sends") {
        restricted_sends(job);
    }
}

TEST_CASE("a failed read or a lost peer ends both sides with MSG_ERR_PEER_FAILED", "[rdma_read]") {
    ReadJob job(3);
    auto &t = job.transport;
    const size_t len = 3 * t.piece;
    const auto data = pattern(len, 8);
    std::vector<char> buf(len);
    REQUIRE(job.engine.isend(2, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(1, kTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
    t.deliver(rts(1, 40, len, msg::kFlagRdmaRead, data.data()));
    settle(job.engine);
    REQUIRE(t.reads.size() == 3);

    // A read fails: its peer is lost, no FIN goes, and later completions of its reads are
    // ignored.
    t.finish_read(0);
    t.finish_read(1, EIO);
    t.finish_read(2);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_RECV);
    CHECK(job.sink.got[0].status == MSG_ERR_PEER_FAILED);
    CHECK(t.of_type(PacketType::Fin).empty());
    CHECK(job.engine.peer_failed(1));

    // The reader of a send dies before its FIN: the send fails, it does not hang.
    job.engine.fail_peer(2);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[1].op == MSG_OP_SEND);
    CHECK(job.sink.got[1].status == MSG_ERR_PEER_FAILED);
    CHECK(job.engine.stats().peers_failed == 2);
    CHECK(job.engine.ops_in_flight() == 0);
}
