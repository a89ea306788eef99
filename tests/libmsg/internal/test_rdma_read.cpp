// The RDMA read rendezvous inside the engine, against a scripted transport: what the sender
// offers in its RTS and how FIN completes it, the receiver's reads (a few at a time, completing
// in any order) and its FIN, restricted mode's CTS and GO turns, and peer failure.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "protocol/rdma_read.hpp"
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

namespace {

// A read job on one host: the sender can copy into its peer's memory in the call.
struct SharedJob : ReadJob {
    explicit SharedJob(bool restricted = false) : ReadJob(2, restricted) {
        transport.copies_now = true;
    }
};

msg::WireHeader shared_cts(uint64_t send_id, uint64_t recv_id, uint64_t len, const void *buf) {
    msg::WireHeader h = cts(1, send_id, recv_id, len);
    h.flags = msg::kFlagShare;
    h.offset = reinterpret_cast<uint64_t>(buf);
    h.key = scripted::kKey;
    return h;
}

msg::WireHeader shared_fin(uint64_t send_id, uint64_t recv_id, uint64_t len, uint64_t wrote) {
    msg::WireHeader h = fin(1, send_id, recv_id, len, msg::kFlagRdmaWrite | msg::kFlagShare);
    h.offset = wrote;
    return h;
}

}  // namespace

TEST_CASE("on one host a sender shares the copy: it writes the second part on the CTS",
          "[rdma_read]") {
    SharedJob job;
    auto &t = job.transport;
    const size_t len = msg::kShareMin * 3 + 4321;
    const size_t split = msg::share_split(len);
    const auto data = pattern(len, 8);
    std::vector<char> dest(len, 0);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    auto offers = t.of_type(PacketType::Rts);
    REQUIRE(offers.size() == 1);
    const uint64_t send_id = offers[0].hdr.send_id;
    CHECK(offers[0].hdr.flags == (msg::kFlagRdmaRead | msg::kFlagShare));

    // A CTS of another kind, or naming fewer bytes than a shared copy starts at, is refused.
    t.deliver(cts(1, send_id, 77, len));
    msg::WireHeader small = shared_cts(send_id, 77, msg::kShareMin - 1, dest.data());
    t.deliver(small);
    settle(job.engine);
    CHECK(job.bad() == 2);
    CHECK(t.copies.empty());

    t.deliver(shared_cts(send_id, 77, len, dest.data()));
    settle(job.engine);
    REQUIRE(t.copies.size() == 1);
    CHECK(t.copies[0].len == len - split);
    CHECK(t.copies[0].remote == reinterpret_cast<uint64_t>(dest.data() + split));
    CHECK(std::equal(data.begin() + long(split), data.end(), dest.begin() + long(split)));
    CHECK(std::all_of(dest.begin(), dest.begin() + long(split), [](char c) { return c == 0; }));
    auto fins = t.of_type(PacketType::Fin);
    REQUIRE(fins.size() == 1);
    CHECK(fins[0].hdr.flags == (msg::kFlagRdmaWrite | msg::kFlagShare));
    CHECK(fins[0].hdr.recv_id == 77);
    CHECK(fins[0].hdr.len == len);
    CHECK(fins[0].hdr.offset == len - split);
    // Its part is written, but the receiver may still be reading the first: no completion.
    CHECK(job.sink.got.empty());
    // A FIN for other than the bytes the CTS accepted is refused; the receiver's completes it.
    t.deliver(fin(1, send_id, 0, len - 1));
    settle(job.engine);
    CHECK(job.bad() == 3);
    t.deliver(fin(1, send_id, 0, len));
    settle(job.engine);
    check_one_completion(job, MSG_OK, len);
}

TEST_CASE("a sender whose share cannot be written says so, and small sends offer no share",
          "[rdma_read]") {
    SharedJob job;
    auto &t = job.transport;
    t.write_now_error = EFAULT;
    const size_t len = msg::kShareMin * 2;
    const auto data = pattern(len, 9);
    std::vector<char> dest(len, 0);
    REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    const uint64_t send_id = t.of_type(PacketType::Rts).at(0).hdr.send_id;
    t.deliver(shared_cts(send_id, 5, len, dest.data()));
    settle(job.engine);
    auto fins = t.of_type(PacketType::Fin);
    REQUIRE(fins.size() == 1);
    CHECK(fins[0].hdr.offset == 0);  // nothing written: the receiver reads it all
    t.deliver(fin(1, send_id, 0, len));
    settle(job.engine);
    check_one_completion(job, MSG_OK, len);

    // Below kShareMin the receiver reads it all, as off the host.
    const auto few = pattern(msg::kShareMin - 1, 10);
    REQUIRE(job.engine.isend(1, kTag, few.data(), few.size(), &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    CHECK(t.of_type(PacketType::Rts).at(1).hdr.flags == msg::kFlagRdmaRead);
}

TEST_CASE("a receiver shares the copy: CTS, its reads of the first part, FIN once both are in",
          "[rdma_read]") {
    for (bool peer_wrote : {true, false}) {
        INFO((peer_wrote ? "the sender wrote its part" : "the sender could not write"));
        SharedJob job;
        auto &t = job.transport;
        const size_t len = 5 * t.piece + 999;
        const size_t split = msg::share_split(len);
        const auto data = pattern(len, 11);
        std::vector<char> buf(len, 0);
        REQUIRE(job.engine.irecv(1, kTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
        t.deliver(rts(1, 700, len, msg::kFlagRdmaRead | msg::kFlagShare, data.data()));
        settle(job.engine);
        auto grants = t.of_type(PacketType::Cts);
        REQUIRE(grants.size() == 1);
        const msg::WireHeader &g = grants[0].hdr;
        CHECK(g.flags == msg::kFlagShare);
        CHECK(g.send_id == 700);
        CHECK(g.len == len);
        CHECK(g.offset == reinterpret_cast<uint64_t>(buf.data()));
        const uint64_t recv_id = g.recv_id;
        // Its reads cover the first part only.
        finish_reads_backwards(job);
        uint64_t read = 0;
        for (const auto &r : t.reads) read += r.len;
        CHECK(read == split);
        CHECK(t.of_type(PacketType::Fin).empty());
        CHECK(job.sink.got.empty());

        // FINs that do not fit the share are refused: wrong bytes, wrong count written, plain.
        t.deliver(shared_fin(700, recv_id, len - 1, len - split));
        t.deliver(shared_fin(700, recv_id, len, len - split - 1));
        t.deliver(fin(1, 700, recv_id, len, msg::kFlagRdmaWrite));
        settle(job.engine);
        CHECK(job.bad() == 3);

        if (peer_wrote)
            std::copy(data.begin() + long(split), data.end(), buf.begin() + long(split));
        t.deliver(shared_fin(700, recv_id, len, peer_wrote ? len - split : 0));
        settle(job.engine);
        if (!peer_wrote) {  // it reads the sender's part as well
            CHECK(job.sink.got.empty());
            finish_reads_backwards(job);
        }
        CHECK(buf == data);
        auto fins = t.of_type(PacketType::Fin);
        REQUIRE(fins.size() == 1);
        CHECK(fins[0].hdr.flags == 0);
        CHECK(fins[0].hdr.len == len);
        check_one_completion(job, MSG_OK, len);
        // A second share FIN finds nothing to finish.
        t.deliver(shared_fin(700, recv_id, len, len - split));
        settle(job.engine);
        CHECK(job.bad() == 4);
    }
}

TEST_CASE("a receiver reads it all where it cannot share: registration refused, restricted mode",
          "[rdma_read]") {
    const size_t len = msg::kShareMin * 2;
    const auto data = pattern(len, 12);
    {
        SharedJob job;
        job.transport.refuse_access = msg::kRemoteWrite;
        std::vector<char> buf(len, 0);
        REQUIRE(job.engine.irecv(1, kTag, buf.data(), len, &job.sink, nullptr) == MSG_OK);
        job.transport.deliver(rts(1, 800, len, msg::kFlagRdmaRead | msg::kFlagShare, data.data()));
        settle(job.engine);
        CHECK(job.transport.of_type(PacketType::Cts).empty());
        finish_reads_backwards(job);
        CHECK(buf == data);
        check_one_completion(job, MSG_OK, len);
    }
    {
        SharedJob job(true);  // restricted: the gate grants reads its own way
        REQUIRE(job.engine.isend(1, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
        settle(job.engine);
        CHECK(job.transport.of_type(PacketType::Rts).at(0).hdr.flags == msg::kFlagRdmaRead);
    }
}
