// The send/recv protocol inside the engine, against a scripted transport: the sender's RTS and
// the chunks it streams after a CTS, the receiver's CTS and the chunks it takes in any order
// (each once, at its own place), truncation, restricted mode and peer failure.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "protocol_script.hpp"

namespace {

using namespace script;

// The chunks the engine has sent for receive recv_id, in the order it sent them.
std::vector<scripted::Packet> chunks_for(const scripted::Transport &t, uint64_t recv_id) {
    std::vector<scripted::Packet> out;
    for (const auto &p : t.of_type(PacketType::Chunk))
        if (p.hdr.recv_id == recv_id) out.push_back(p);
    return out;
}

}  // namespace

TEST_CASE("a sender streams exactly the accepted bytes in chunks, in order, after the CTS",
          "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    const size_t len = 3 * job.chunk() + 123;
    const auto data = pattern(len, 1);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    auto offers = t.of_type(PacketType::Rts);
    REQUIRE(offers.size() == 1);
    CHECK(offers[0].peer == 1);
    CHECK(offers[0].hdr.flags == 0);
    CHECK(offers[0].hdr.tag == kTag);
    CHECK(offers[0].hdr.len == len);
    CHECK(t.of_type(PacketType::Chunk).empty());  // nothing moves before the CTS
    const uint64_t send_id = offers[0].hdr.send_id;

    // The receiver accepts fewer bytes than were sent: only those go.
    const size_t accepted = 2 * job.chunk() + 5;
    t.deliver(cts(1, send_id, 4242, accepted));
    settle(job.engine);
    CHECK(job.bad() == 0);
    auto sent = chunks_for(t, 4242);
    REQUIRE(sent.size() == 3);
    std::vector<char> got;
    for (const auto &c : sent) {
        CHECK(c.peer == 1);
        CHECK(c.hdr.send_id == send_id);
        CHECK(c.hdr.offset == got.size());
        CHECK(c.hdr.len == c.payload.size());
        got.insert(got.end(), c.payload.begin(), c.payload.end());
    }
    CHECK(got == std::vector<char>(data.begin(), data.begin() + static_cast<long>(accepted)));
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_SEND);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == accepted);
}

TEST_CASE("a sender takes one CTS, of no more than its bytes and without a write target",
          "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    const size_t len = job.chunk() + 1;
    const auto data = pattern(len, 2);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    const uint64_t send_id = t.of_type(PacketType::Rts).at(0).hdr.send_id;

    msg::WireHeader target = cts(1, send_id, 7, len);
    target.flags = msg::kFlagRdmaWrite;
    target.offset = 4096;
    t.deliver(target);                       // a write target: another protocol's CTS
    t.deliver(cts(1, send_id, 7, len + 1));  // more than the message
    t.deliver(cts(1, send_id + 1, 7, len));  // no such send
    t.deliver(go(1, send_id, send_id));      // a GO names a receive, not a send
    t.deliver(fin(1, send_id, 7, len));      // the RDMA read protocol's FIN
    settle(job.engine);
    CHECK(job.bad() == 5);
    CHECK(t.of_type(PacketType::Chunk).empty());

    t.deliver(cts(1, send_id, 7, len));
    t.deliver(cts(1, send_id, 7, len));  // a duplicate
    settle(job.engine);
    CHECK(job.bad() == 6);
    CHECK(chunks_for(t, 7).size() == 2);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].bytes == len);
}

TEST_CASE("a CTS for no bytes completes the send at once, with nothing sent", "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    const auto data = pattern(5000, 3);
    REQUIRE(job.engine.isend(1, kTag, data.data(), data.size(), &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    t.deliver(cts(1, t.of_type(PacketType::Rts).at(0).hdr.send_id, 3, 0));
    settle(job.engine);
    CHECK(t.of_type(PacketType::Chunk).empty());
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == 0);
}

TEST_CASE("a receiver grants with a CTS and takes chunks in any order, each once", "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    const size_t piece = job.chunk();
    const size_t len = 4 * piece + 10;
    const auto data = pattern(len, 4);
    std::vector<char> buf(len, 0);
    auto grants = grant(job, buf, 700);
    REQUIRE(grants.size() == 1);
    CHECK(grants[0].peer == 1);
    CHECK(grants[0].hdr.flags == 0);
    CHECK(grants[0].hdr.send_id == 700);
    CHECK(grants[0].hdr.len == len);
    const uint64_t recv_id = grants[0].hdr.recv_id;

    // Last first, then the others backwards; the first one twice.
    for (size_t i : {4, 3, 0, 0, 2}) {
        Chunk c = chunk(1, 700, recv_id, data, len, piece, i);
        t.deliver(c.h, c.payload);
    }
    settle(job.engine);
    CHECK(job.bad() == 1);  // the duplicate
    CHECK(job.sink.got.empty());
    Chunk last = chunk(1, 700, recv_id, data, len, piece, 1);
    t.deliver(last.h, last.payload);
    settle(job.engine);
    CHECK(job.bad() == 1);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == MSG_OP_RECV);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == len);
    CHECK(job.sink.got[0].source == 1);
    CHECK(job.sink.got[0].tag == kTag);
    CHECK(buf == data);

    // The receive is gone: a chunk repeated now finds nothing.
    t.deliver(last.h, last.payload);
    settle(job.engine);
    CHECK(job.bad() == 2);
    CHECK(job.sink.got.size() == 1);
}

TEST_CASE("a chunk out of its place, short, long or not the receive's is dropped and counted",
          "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV, 3);
    auto &t = job.transport;
    const size_t piece = job.chunk();
    const size_t len = 2 * piece + 100;
    const auto data = pattern(len, 5);
    std::vector<char> buf(len, 0);
    REQUIRE(job.engine.irecv(1, kTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
    t.deliver(rts(1, 800, len));
    settle(job.engine);
    const uint64_t recv_id = t.of_type(PacketType::Cts).at(0).hdr.recv_id;

    Chunk good = chunk(1, 800, recv_id, data, len, piece, 2);
    std::vector<Chunk> bad(6, good);
    bad[0].h.offset += 1;         // not at a chunk boundary
    bad[1].h.offset = 3 * piece;  // past the accepted bytes
    bad[2].payload.pop_back();    // shorter than its place
    bad[2].h.len = bad[2].payload.size();
    bad[3] = chunk(1, 800, recv_id, data, len, piece, 1);  // longer than the last place
    bad[3].h.offset = 2 * piece;
    bad[4].h.recv_id = recv_id + 1;  // no such receive
    bad[5].h.src = 2;                // another rank's
    for (size_t i = 0; i < bad.size(); ++i) {
        INFO(i);
        t.deliver(bad[i].h, bad[i].payload);
        settle(job.engine);
        CHECK(job.bad() == i + 1);
    }
    CHECK(job.sink.got.empty());
    CHECK(std::all_of(buf.begin(), buf.end(), [](char c) { return c == 0; }));
    for (size_t i = 0; i < 3; ++i) {
        Chunk c = chunk(1, 800, recv_id, data, len, piece, i);
        t.deliver(c.h, c.payload);
    }
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(buf == data);
}

TEST_CASE("a truncated receive accepts what fits and reports it; one of no bytes ends at once",
          "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    const size_t piece = job.chunk();

    SECTION("some bytes fit") {
        const size_t len = 3 * piece, capacity = piece + 7;
        const auto data = pattern(len, 6);
        std::vector<char> buf(capacity + 16, 'z');
        REQUIRE(job.engine.irecv(1, kTag, buf.data(), capacity, &job.sink, nullptr) == MSG_OK);
        t.deliver(rts(1, 900, len));
        settle(job.engine);
        const auto g = t.of_type(PacketType::Cts).at(0).hdr;
        CHECK(g.len == capacity);
        for (size_t i = 0; i < 2; ++i) {
            Chunk c = chunk(1, 900, g.recv_id, data, capacity, piece, i);
            t.deliver(c.h, c.payload);
        }
        settle(job.engine);
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].status == MSG_ERR_TRUNCATED);
        CHECK(job.sink.got[0].bytes == capacity);
        CHECK(std::equal(data.begin(), data.begin() + static_cast<long>(capacity), buf.begin()));
        CHECK(std::all_of(buf.begin() + static_cast<long>(capacity), buf.end(),
                          [](char c) { return c == 'z'; }));
    }

    SECTION("nothing fits") {
        REQUIRE(job.engine.irecv(1, kTag, nullptr, 0, &job.sink, nullptr) == MSG_OK);
        t.deliver(rts(1, 901, 5000));
        settle(job.engine);
        auto grants = t.of_type(PacketType::Cts);
        REQUIRE(grants.size() == 1);
        CHECK(grants[0].hdr.len == 0);
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].status == MSG_ERR_TRUNCATED);
        CHECK(job.sink.got[0].bytes == 0);
    }
}

TEST_CASE("an RTS that arrives before its receive waits, and is granted when the receive comes",
          "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    const size_t len = job.chunk() + 50;
    const auto data = pattern(len, 7);
    t.deliver(rts(1, 1000, len));
    settle(job.engine);
    CHECK(t.of_type(PacketType::Cts).empty());
    CHECK(job.engine.unexpected_count(1) == 1);
    std::vector<char> buf(len);
    REQUIRE(job.engine.irecv(MSG_ANY_SOURCE, MSG_ANY_TAG, buf.data(), len, &job.sink, nullptr) ==
            MSG_OK);
    settle(job.engine);
    CHECK(job.engine.unexpected_count(1) == 0);
    const auto g = t.of_type(PacketType::Cts).at(0).hdr;
    CHECK(g.send_id == 1000);
    for (size_t i : {1, 0}) {
        Chunk c = chunk(1, 1000, g.recv_id, data, len, job.chunk(), i);
        t.deliver(c.h, c.payload);
    }
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].source == 1);
    CHECK(job.sink.got[0].tag == kTag);
    CHECK(buf == data);
}

TEST_CASE("restricted: one long receive and one long send move data at a time", "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV, 3, true);
    auto &t = job.transport;
    const size_t piece = job.chunk();
    const size_t len = 2 * piece;

    SECTION("receives are granted one after the other") {
        const auto d1 = pattern(len, 8), d2 = pattern(len, 9);
        std::vector<char> b1(len), b2(len);
        REQUIRE(job.engine.irecv(1, kTag, b1.data(), len, &job.sink, nullptr) == MSG_OK);
        REQUIRE(job.engine.irecv(2, kTag, b2.data(), len, &job.sink, nullptr) == MSG_OK);
        t.deliver(rts(2, 20, len));
        t.deliver(rts(1, 10, len));
        settle(job.engine);
        auto grants = t.of_type(PacketType::Cts);
        REQUIRE(grants.size() == 1);  // the first RTS to match takes the slot
        CHECK(grants[0].peer == 2);
        for (size_t i = 0; i < 2; ++i) {
            Chunk c = chunk(2, 20, grants[0].hdr.recv_id, d2, len, piece, i);
            t.deliver(c.h, c.payload);
        }
        settle(job.engine);
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].source == 2);
        CHECK(b2 == d2);
        grants = t.of_type(PacketType::Cts);
        REQUIRE(grants.size() == 2);  // the slot passed on
        CHECK(grants[1].peer == 1);
        for (size_t i = 0; i < 2; ++i) {
            Chunk c = chunk(1, 10, grants[1].hdr.recv_id, d1, len, piece, i);
            t.deliver(c.h, c.payload);
        }
        settle(job.engine);
        REQUIRE(job.sink.got.size() == 2);
        CHECK(b1 == d1);
    }

    SECTION("a send granted while another moves waits for it to finish") {
        const auto data = pattern(len, 10);
        REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
        REQUIRE(job.engine.isend(2, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
        settle(job.engine);
        auto offers = t.of_type(PacketType::Rts);
        REQUIRE(offers.size() == 2);  // RTS packets are never held back
        t.deliver(cts(2, offers[1].hdr.send_id, 5, len));
        t.deliver(cts(1, offers[0].hdr.send_id, 6, len));
        settle(job.engine);
        REQUIRE(job.sink.got.size() == 2);
        CHECK(job.sink.got[0].source == 2);
        CHECK(job.sink.got[1].source == 1);
        // Every chunk of the second send went out after the first send had completed.
        const size_t first_done = job.sink.sent_before[0];
        size_t seen = 0;
        for (size_t i = 0; i < t.sent.size(); ++i) {
            if (t.sent[i].hdr.type != PacketType::Chunk || t.sent[i].hdr.recv_id != 6) continue;
            CHECK(i >= first_done);
            ++seen;
        }
        CHECK(seen == 2);
        CHECK(chunks_for(t, 5).size() == 2);
    }
}

TEST_CASE("a lost peer ends its sends and receives with MSG_ERR_PEER_FAILED", "[send_recv]") {
    Job job(MSG_PROTOCOL_SENDRECV, 3);
    auto &t = job.transport;
    const size_t piece = job.chunk();
    const size_t len = 3 * piece;
    const auto data = pattern(len, 11);
    std::vector<char> buf(len);

    SECTION("the receiver's sender fails between chunks") {
        REQUIRE(job.engine.irecv(2, kTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
        t.deliver(rts(2, 30, len));
        settle(job.engine);
        const uint64_t recv_id = t.of_type(PacketType::Cts).at(0).hdr.recv_id;
        Chunk c0 = chunk(2, 30, recv_id, data, len, piece, 0);
        t.deliver(c0.h, c0.payload);
        settle(job.engine);
        job.engine.fail_peer(2);
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].op == MSG_OP_RECV);
        CHECK(job.sink.got[0].status == MSG_ERR_PEER_FAILED);
        CHECK(job.sink.got[0].bytes == 0);
        // What the failed rank still sends is ignored (not even counted).
        for (size_t i = 1; i < 3; ++i) {
            Chunk c = chunk(2, 30, recv_id, data, len, piece, i);
            t.deliver(c.h, c.payload);
        }
        settle(job.engine);
        CHECK(job.bad() == 0);
        CHECK(job.sink.got.size() == 1);
    }

    SECTION("the connection to the receiver breaks while chunks go") {
        REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
        settle(job.engine);
        t.refuse_sends_to = 1;
        t.deliver(cts(1, t.of_type(PacketType::Rts).at(0).hdr.send_id, 4, len));
        settle(job.engine);
        CHECK(job.engine.peer_failed(1));
        CHECK(t.of_type(PacketType::Chunk).empty());
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].op == MSG_OP_SEND);
        CHECK(job.sink.got[0].status == MSG_ERR_PEER_FAILED);
        // A new message to it is refused at once.
        CHECK(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) ==
              MSG_ERR_PEER_FAILED);
    }
}

TEST_CASE("on one host a sender copies each chunk into the place its receiver offered",
          "[send_recv][in_place]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    t.copies_now = true;
    const size_t len = 3 * job.chunk() + 123;
    const auto data = pattern(len, 21);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    const uint64_t send_id = t.of_type(PacketType::Rts).at(0).hdr.send_id;

    SECTION("each chunk lands in place, then a notice without payload says so") {
        const size_t accepted = 2 * job.chunk() + 7;
        std::vector<char> target(accepted, 0);
        msg::WireHeader h = cts(1, send_id, 51, accepted);
        h.flags = msg::kFlagInPlace;
        h.offset = reinterpret_cast<uint64_t>(target.data());
        h.key = scripted::kKey;
        t.deliver(h);
        settle(job.engine);
        CHECK(job.bad() == 0);
        CHECK(target ==
              std::vector<char>(data.begin(), data.begin() + static_cast<long>(accepted)));
        REQUIRE(t.copies.size() == 3);
        const auto notices = chunks_for(t, 51);
        REQUIRE(notices.size() == 3);
        for (size_t i = 0; i < 3; ++i) {
            CHECK(t.copies[i].key == scripted::kKey);
            CHECK(t.copies[i].remote == h.offset + i * job.chunk());
            CHECK(notices[i].hdr.flags == msg::kFlagInPlace);
            CHECK(notices[i].payload.empty());
            CHECK(notices[i].hdr.offset == i * job.chunk());
            CHECK(notices[i].hdr.len == std::min(job.chunk(), accepted - i * job.chunk()));
        }
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].status == MSG_OK);
        CHECK(job.sink.got[0].bytes == accepted);
    }

    SECTION("a place that wraps the address space is refused") {
        msg::WireHeader h = cts(1, send_id, 52, len);
        h.flags = msg::kFlagInPlace;
        h.offset = UINT64_MAX - 10;
        t.deliver(h);
        settle(job.engine);
        CHECK(job.bad() == 1);
        CHECK(t.copies.empty());
        CHECK(job.sink.got.empty());
    }

    SECTION("a copy that fails ends the send with the peer, and no notice goes") {
        t.write_now_error = ESRCH;
        std::vector<char> target(len, 0);
        msg::WireHeader h = cts(1, send_id, 53, len);
        h.flags = msg::kFlagInPlace;
        h.offset = reinterpret_cast<uint64_t>(target.data());
        t.deliver(h);
        settle(job.engine);
        CHECK(chunks_for(t, 53).empty());
        REQUIRE(job.sink.got.size() == 1);
        CHECK(job.sink.got[0].status != MSG_OK);
    }
}

TEST_CASE("a sender that cannot copy to its receiver sends a place's chunks with their bytes",
          "[send_recv][in_place]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;  // copies_now stays off
    const size_t len = job.chunk() + 9;
    const auto data = pattern(len, 22);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    std::vector<char> target(len, 0);
    msg::WireHeader h = cts(1, t.of_type(PacketType::Rts).at(0).hdr.send_id, 54, len);
    h.flags = msg::kFlagInPlace;
    h.offset = reinterpret_cast<uint64_t>(target.data());
    t.deliver(h);
    settle(job.engine);
    const auto sent = chunks_for(t, 54);
    REQUIRE(sent.size() == 2);
    CHECK(sent[0].hdr.flags == 0);
    CHECK(sent[0].payload.size() == job.chunk());
    CHECK(target == std::vector<char>(len, 0));
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == MSG_OK);
}

TEST_CASE("on one host a receiver offers its buffer and completes on the notices, each once",
          "[send_recv][in_place]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    t.copies_now = true;
    const size_t piece = job.chunk();
    const size_t len = 3 * piece + 10;
    const auto data = pattern(len, 23);
    std::vector<char> buf(len, 0);
    const auto grants = grant(job, buf, 800);
    REQUIRE(grants.size() == 1);
    CHECK(grants[0].hdr.flags == msg::kFlagInPlace);
    CHECK(grants[0].hdr.offset == reinterpret_cast<uint64_t>(buf.data()));
    CHECK(grants[0].hdr.key == scripted::kKey);
    CHECK(grants[0].hdr.len == len);
    const uint64_t recv_id = grants[0].hdr.recv_id;

    // The sender's copies, as they would land; then their notices, out of order, one twice,
    // one of the wrong length, and one chunk that brings its bytes after all.
    std::copy(data.begin(), data.begin() + static_cast<long>(3 * piece), buf.begin());
    auto notice = [&](size_t i, uint64_t n) {
        Chunk c = chunk(1, 800, recv_id, data, len, piece, i);
        c.h.flags = msg::kFlagInPlace;
        c.h.len = n;
        t.deliver(c.h);
    };
    notice(2, piece);
    notice(0, piece);
    notice(0, piece);      // a duplicate
    notice(1, piece - 1);  // not its place's length
    settle(job.engine);
    CHECK(job.bad() == 2);
    CHECK(job.sink.got.empty());
    notice(1, piece);
    Chunk last = chunk(1, 800, recv_id, data, len, piece, 3);
    t.deliver(last.h, last.payload);
    settle(job.engine);
    CHECK(job.bad() == 2);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == MSG_OK);
    CHECK(job.sink.got[0].bytes == len);
    CHECK(buf == data);
}

TEST_CASE("a receiver that offered no place drops notices", "[send_recv][in_place]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;

    SECTION("its transport cannot copy across") {}
    SECTION("its buffer could not be registered for remote writes") {
        t.copies_now = true;
        t.refuse_access = msg::kRemoteWrite;
    }
    const size_t len = job.chunk() + 1;
    const auto data = pattern(len, 24);
    std::vector<char> buf(len, 0);
    const auto grants = grant(job, buf, 900);
    REQUIRE(grants.size() == 1);
    CHECK(grants[0].hdr.flags == 0);
    Chunk c = chunk(1, 900, grants[0].hdr.recv_id, data, len, job.chunk(), 0);
    c.h.flags = msg::kFlagInPlace;
    t.deliver(c.h);
    settle(job.engine);
    CHECK(job.bad() == 1);
    CHECK(job.sink.got.empty());
}
