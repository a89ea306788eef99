// The engine believes the fabric, not the header, about who sent a packet; it moves data only for
// a request it has with that very peer, within its bounds; and one peer's unexpected messages
// stay bounded, the peer slowed through its credit, and are all delivered in order later.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../internal/scripted_transport.hpp"

namespace {

using msg::PacketType;
using scripted::header;
using scripted::settle;

constexpr int kTag = 5;

msg::EngineOptions options(int protocol, bool restricted = false) {
    msg::EngineOptions o;
    o.long_protocol = protocol;
    o.restricted = restricted;
    o.eager_max = 1024;
    o.buffer_size = 16384;
    o.credits = 8;
    return o;
}

struct Job {
    Job(int size, const msg::EngineOptions &o) : engine(&transport, 0, size, o) {
        REQUIRE(engine.init() == MSG_OK);
    }
    uint64_t bad() const { return engine.stats().bad_headers; }

    scripted::Transport transport;
    msg::Engine engine;
    scripted::Sink sink;
};

msg::WireHeader eager(int src, int tag, size_t len) {
    msg::WireHeader h = header(PacketType::Eager, src);
    h.tag = tag;
    h.len = len;
    return h;
}

msg::WireHeader cts(int src, uint64_t send_id, uint64_t len, const void *target) {
    msg::WireHeader h = header(PacketType::Cts, src);
    h.flags = msg::kFlagRdmaWrite;
    h.send_id = send_id;
    h.recv_id = 77;
    h.len = len;
    h.offset = reinterpret_cast<uint64_t>(target);
    h.key = 0x77;
    return h;
}

}  // namespace

TEST_CASE("a packet whose header claims another rank than its sender is dropped and counted",
          "[sender]") {
    Job job(3, options(MSG_PROTOCOL_RDMA_WRITE));
    auto &t = job.transport;
    char buf[16] = {};
    REQUIRE(job.engine.irecv(2, kTag, buf, sizeof buf, &job.sink, nullptr) == MSG_OK);

    // Rank 1 sends a message as rank 2, with credit rank 2 never had to give.
    msg::WireHeader forged = eager(2, kTag, 4);
    forged.credits = 3;
    t.deliver_from(1, forged, {'f', 'a', 'k', 'e'});
    // A packet the fabric cannot place in the job is not believed either.
    t.deliver_from(-1, eager(2, kTag, 4), {'l', 'o', 's', 't'});
    settle(job.engine);
    CHECK(job.sink.got.empty());
    CHECK(job.engine.forged() == 2);
    CHECK(job.bad() == 2);

    // Rank 2's own message is taken.
    t.deliver(eager(2, kTag, 4), {'r', 'e', 'a', 'l'});
    settle(job.engine);
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].source == 2);
    CHECK(std::memcmp(buf, "real", 4) == 0);
    CHECK(job.engine.forged() == 2);
}

TEST_CASE("a forged or out-of-bounds clear-to-send is refused and nothing is written",
          "[move_data]") {
    Job job(3, options(MSG_PROTOCOL_RDMA_WRITE));
    auto &t = job.transport;
    const size_t len = 3 * t.piece;
    std::vector<char> data(len, 'd'), target(len);
    REQUIRE(job.engine.isend(2, kTag, data.data(), len, &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    const uint64_t send_id = t.of_type(PacketType::Rts).at(0).hdr.send_id;

    // Rank 1 forges rank 2's CTS, aiming the writes at memory of its choosing.
    t.deliver_from(1, cts(2, send_id, len, target.data()));
    settle(job.engine);
    CHECK(job.engine.forged() == 1);
    CHECK(t.writes.empty());

    // Rank 1, as itself, names a send of ours that goes to rank 2: not outstanding to rank 1.
    t.deliver(cts(1, send_id, len, target.data()));
    settle(job.engine);
    CHECK(job.bad() == 2);
    CHECK(t.writes.empty());

    // Rank 2 asks for more than the message, or a range that wraps.
    t.deliver(cts(2, send_id, len + 1, target.data()));
    t.deliver(cts(2, send_id, 100, reinterpret_cast<void *>(UINT64_MAX - 10)));
    settle(job.engine);
    CHECK(job.bad() == 4);
    CHECK(t.writes.empty());

    // The real CTS moves exactly the message into the receiver's buffer.
    t.deliver(cts(2, send_id, len, target.data()));
    settle(job.engine);
    CHECK(job.bad() == 4);
    REQUIRE(t.writes.size() == 3);
    for (const auto &w : t.writes) {
        CHECK(w.peer == 2);
        CHECK(w.remote >= reinterpret_cast<uint64_t>(target.data()));
        CHECK(w.remote + w.len <= reinterpret_cast<uint64_t>(target.data()) + len);
    }
}

TEST_CASE("an RDMA read send takes no CTS unless restricted, and a receive reads on one GO only",
          "[move_data]") {
    SECTION("unrestricted: the receiver reads at once, so a CTS is not its own") {
        Job job(2, options(MSG_PROTOCOL_RDMA));
        auto &t = job.transport;
        std::vector<char> data(4096, 'r');
        REQUIRE(job.engine.isend(1, kTag, data.data(), data.size(), &job.sink, nullptr) == MSG_OK);
        settle(job.engine);
        const uint64_t send_id = t.of_type(PacketType::Rts).at(0).hdr.send_id;
        msg::WireHeader h = cts(1, send_id, data.size(), nullptr);
        h.flags = 0;
        h.offset = 0;
        t.deliver(h);
        settle(job.engine);
        CHECK(job.bad() == 1);
        CHECK(t.of_type(PacketType::Go).empty());
    }
    SECTION("restricted: a second GO does not start the reads again") {
        Job job(2, options(MSG_PROTOCOL_RDMA, true));
        auto &t = job.transport;
        t.reads_on = true;
        std::vector<char> buf(3 * t.piece);
        REQUIRE(job.engine.irecv(1, kTag, buf.data(), buf.size(), &job.sink, nullptr) == MSG_OK);
        msg::WireHeader rts = header(PacketType::Rts, 1);
        rts.flags = msg::kFlagRdmaRead;
        rts.tag = kTag;
        rts.send_id = 31;
        rts.len = buf.size();
        rts.offset = 0x10000;
        rts.key = 9;
        msg::WireHeader go = header(PacketType::Go, 1);
        go.send_id = 31;
        t.deliver(rts);
        settle(job.engine);
        go.recv_id = t.of_type(PacketType::Cts).at(0).hdr.recv_id;
        t.deliver(go);
        settle(job.engine);
        CHECK(job.bad() == 0);
        const size_t reads = t.reads.size();
        CHECK(reads == 3);
        t.deliver(go);
        settle(job.engine);
        CHECK(job.bad() == 1);
        CHECK(t.reads.size() == reads);
        for (const auto &r : t.reads) {
            CHECK(r.peer == 1);
            CHECK(r.remote >= 0x10000);
            CHECK(r.remote + r.len <= 0x10000 + buf.size());
        }
    }
}

TEST_CASE(
    "a flood of unexpected messages from one peer is held to the bound, then all delivered "
    "in order",
    "[unexpected_bound]") {
    msg::EngineOptions o = options(MSG_PROTOCOL_RDMA_WRITE);
    o.unexpected_count = 4;
    o.unexpected_bytes = 1u << 20;
    Job job(2, o);
    auto &t = job.transport;
    constexpr int kTotal = 60;
    constexpr size_t kBytes = 600;

    // Rank 1 behaves as a correct sender: it spends a credit per packet, keeps one back from new
    // messages, and counts the credit the engine gives back on every packet it sends.
    int credits = o.credits;
    size_t seen = 0;
    int sent = 0;
    size_t most_held = 0;
    auto pump = [&] {
        for (;;) {
            for (; seen < t.sent.size(); ++seen)
                if (t.sent[seen].peer == 1) credits += static_cast<int>(t.sent[seen].hdr.credits);
            if (sent == kTotal || credits <= 1) return;
            std::vector<char> payload(kBytes, static_cast<char>(sent));
            t.deliver(eager(1, kTag, kBytes), payload);
            --credits;
            ++sent;
            settle(job.engine);
            most_held = std::max(most_held, job.engine.unexpected_count(1));
        }
    };
    pump();
    // The flood stopped: the bound plus at most the peer's credits are held.
    CHECK(sent < kTotal);
    CHECK(job.engine.unexpected_count(1) <= o.unexpected_count + static_cast<size_t>(o.credits));
    CHECK(job.engine.unexpected_bytes(1) == job.engine.unexpected_count(1) * kBytes);

    // The application catches up one receive at a time; the peer goes on as credit comes back.
    std::vector<std::vector<char>> bufs(kTotal, std::vector<char>(kBytes));
    for (int i = 0; i < kTotal; ++i) {
        REQUIRE(job.engine.irecv(1, kTag, bufs[static_cast<size_t>(i)].data(), kBytes, &job.sink,
                                 nullptr) == MSG_OK);
        settle(job.engine);
        pump();
    }
    CHECK(sent == kTotal);
    CHECK(most_held <= o.unexpected_count + static_cast<size_t>(o.credits));
    REQUIRE(job.sink.got.size() == static_cast<size_t>(kTotal));
    for (int i = 0; i < kTotal; ++i) {
        INFO("message " << i);
        CHECK(job.sink.got[static_cast<size_t>(i)].status == MSG_OK);
        CHECK(bufs[static_cast<size_t>(i)] == std::vector<char>(kBytes, static_cast<char>(i)));
    }
    CHECK(job.engine.unexpected_count(1) == 0);
    CHECK(job.bad() == 0);
}

TEST_CASE("a peer that holds our credit back for new messages still gets our CTS",
          "[unexpected_bound]") {
    Job job(2, options(MSG_PROTOCOL_RDMA_WRITE));
    auto &t = job.transport;
    // Twenty small messages to rank 1, which receives none and so returns no credit.
    std::vector<char> small(100, 's');
    for (int i = 0; i < 20; ++i)
        REQUIRE(job.engine.isend(1, kTag, small.data(), small.size(), &job.sink, nullptr) ==
                MSG_OK);
    settle(job.engine);
    CHECK(t.of_type(PacketType::Eager).size() == 7);  // one credit kept back

    // Rank 1 offers a long message; our receive's CTS passes the queued messages.
    std::vector<char> buf(8000);
    REQUIRE(job.engine.irecv(1, kTag + 1, buf.data(), buf.size(), &job.sink, nullptr) == MSG_OK);
    msg::WireHeader rts = header(PacketType::Rts, 1);
    rts.flags = msg::kFlagRdmaWrite;
    rts.tag = kTag + 1;
    rts.send_id = 12;
    rts.len = buf.size();
    t.deliver(rts);
    settle(job.engine);
    REQUIRE(t.of_type(PacketType::Cts).size() == 1);
    CHECK(t.of_type(PacketType::Eager).size() == 7);
}
