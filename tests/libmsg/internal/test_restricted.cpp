// Restricted mode's gate around every long-message protocol, against a scripted transport: one
// receive slot and one send slot shared by all protocols, handed on in order when the holder
// completes, a send and a receive moving at once, and an abort that hands nothing on.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocol_script.hpp"

namespace {

using namespace script;

std::vector<scripted::Packet> to_peer(const std::vector<scripted::Packet> &packets, int peer) {
    std::vector<scripted::Packet> out;
    for (const auto &p : packets)
        if (p.peer == peer) out.push_back(p);
    return out;
}

}  // namespace

TEST_CASE("one receive slot serves every protocol, in the order the RTS packets matched",
          "[restricted]") {
    Job job(MSG_PROTOCOL_SENDRECV, 4, true);
    auto &t = job.transport;
    t.reads_on = true;
    const size_t len = 2 * job.chunk() + 3;
    const auto d1 = pattern(len, 1), d2 = pattern(len, 2), d3 = pattern(len, 3);
    std::vector<char> b1(len), b2(len), b3(len);
    REQUIRE(job.engine.irecv(1, kTag, b1.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(2, kTag, b2.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(3, kTag, b3.data(), len, &job.sink, nullptr) == MSG_OK);
    t.deliver(rts(1, 10, len, msg::kFlagRdmaWrite));            // RDMA write
    t.deliver(rts(2, 20, len));                                 // send/recv
    t.deliver(rts(3, 30, len, msg::kFlagRdmaRead, d3.data()));  // RDMA read
    settle(job.engine);
    auto grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 1);
    CHECK(grants[0].peer == 1);
    CHECK(grants[0].hdr.flags == msg::kFlagRdmaWrite);

    // Rank 1 writes, then sends FIN: the slot passes to rank 2's send/recv receive.
    std::memcpy(reinterpret_cast<char *>(grants[0].hdr.offset), d1.data(), len);
    t.deliver(fin(1, 10, grants[0].hdr.recv_id, len, msg::kFlagRdmaWrite));
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].source == 1);
    CHECK(b1 == d1);
    grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 2);
    CHECK(grants[1].peer == 2);
    CHECK(grants[1].hdr.flags == 0);
    for (size_t i = 0; i < 3; ++i) {
        Chunk c = chunk(2, 20, grants[1].hdr.recv_id, d2, len, job.chunk(), i);
        t.deliver(c.h, c.payload);
    }
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[1].source == 2);
    CHECK(b2 == d2);

    // Then to rank 3's read: a plain CTS asks for its sender's turn, GO gives it.
    grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 3);
    CHECK(grants[2].peer == 3);
    CHECK(t.reads.empty());
    t.deliver(go(3, 30, grants[2].hdr.recv_id));
    settle(job.engine);
    REQUIRE(t.reads.size() == 1);
    t.finish_read(0);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 3);
    CHECK(job.sink.got[2].source == 3);
    CHECK(job.sink.got[2].status == MSG_OK);
    CHECK(b3 == d3);
    CHECK(to_peer(t.of_type(PacketType::Fin), 3).size() == 1);
    CHECK(job.bad() == 0);
}

TEST_CASE("a write receive that falls back to chunks holds the slot until its last chunk",
          "[restricted]") {
    Job job(MSG_PROTOCOL_RDMA_WRITE, 3, true);
    auto &t = job.transport;
    t.refuse_access = msg::kRemoteWrite;
    const size_t len = job.chunk() + 10;
    const auto d1 = pattern(len, 4), d2 = pattern(len, 5);
    std::vector<char> b1(len), b2(len);
    REQUIRE(job.engine.irecv(1, kTag, b1.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(2, kTag, b2.data(), len, &job.sink, nullptr) == MSG_OK);
    t.deliver(rts(1, 10, len, msg::kFlagRdmaWrite));
    t.deliver(rts(2, 20, len, msg::kFlagRdmaWrite));
    settle(job.engine);
    auto grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 1);
    CHECK(grants[0].hdr.flags == 0);  // no write target: chunks
    // A write FIN is not what this receive waits for any more.
    t.deliver(fin(1, 10, grants[0].hdr.recv_id, len, msg::kFlagRdmaWrite));
    Chunk c0 = chunk(1, 10, grants[0].hdr.recv_id, d1, len, job.chunk(), 0);
    t.deliver(c0.h, c0.payload);
    settle(job.engine);
    CHECK(job.bad() == 1);
    CHECK(job.sink.got.empty());
    CHECK(t.of_type(PacketType::Cts).size() == 1);
    Chunk c1 = chunk(1, 10, grants[0].hdr.recv_id, d1, len, job.chunk(), 1);
    t.deliver(c1.h, c1.payload);
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(b1 == d1);
    grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 2);
    CHECK(grants[1].peer == 2);
    for (size_t i = 0; i < 2; ++i) {
        Chunk c = chunk(2, 20, grants[1].hdr.recv_id, d2, len, job.chunk(), i);
        t.deliver(c.h, c.payload);
    }
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(b2 == d2);
}

TEST_CASE("one long send and one long receive move data at the same time", "[restricted]") {
    Job job(MSG_PROTOCOL_SENDRECV, 3, true);
    auto &t = job.transport;
    const size_t len = 3 * job.chunk();
    const auto out = pattern(len, 6), in = pattern(len, 7);
    std::vector<char> buf(len);
    REQUIRE(job.engine.isend(1, kTag, out.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(2, kTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    t.deliver(rts(2, 50, len));
    t.deliver(cts(1, t.of_type(PacketType::Rts).at(0).hdr.send_id, 11, len));
    settle(job.engine);
    // The send's chunks went out while the receive holds its slot.
    CHECK(to_peer(t.of_type(PacketType::Chunk), 1).size() == 3);
    auto grants = t.of_type(PacketType::Cts);
    REQUIRE(grants.size() == 1);
    for (size_t i = 0; i < 3; ++i) {
        Chunk c = chunk(2, 50, grants[0].hdr.recv_id, in, len, job.chunk(), i);
        t.deliver(c.h, c.payload);
    }
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 2);
    CHECK(job.sink.got[0].op == MSG_OP_SEND);
    CHECK(job.sink.got[1].op == MSG_OP_RECV);
    CHECK(buf == in);
}

TEST_CASE("an abort completes waiting and moving requests alike and hands no slot on",
          "[restricted]") {
    Job job(MSG_PROTOCOL_SENDRECV, 3, true);
    auto &t = job.transport;
    const size_t len = 2 * job.chunk();
    const auto data = pattern(len, 8);
    std::vector<char> b1(len), b2(len);
    REQUIRE(job.engine.irecv(1, kTag, b1.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.irecv(2, kTag, b2.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    REQUIRE(job.engine.isend(2, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    t.deliver(rts(1, 10, len));
    t.deliver(rts(2, 20, len));
    auto offers = t.of_type(PacketType::Rts);
    REQUIRE(offers.size() == 2);
    t.deliver(cts(1, offers[0].hdr.send_id, 5, len));
    t.deliver(cts(2, offers[1].hdr.send_id, 6, len));
    // One round: the first receive's CTS and the first send's chunks go; nothing completes.
    job.engine.progress();
    REQUIRE(job.sink.got.empty());
    REQUIRE(t.of_type(PacketType::Cts).size() == 1);
    const size_t sent = t.sent.size();

    job.engine.abort_all(MSG_ERR_CANCELED);
    REQUIRE(job.sink.got.size() == 4);
    for (const auto &c : job.sink.got) CHECK(c.status == MSG_ERR_CANCELED);
    settle(job.engine);
    // Nothing that waited for a slot was granted or started by the aborts.
    CHECK(t.sent.size() == sent);
}
