// The shared receive pool: its plan (what a job of N ranks posts), and an engine serving more
// peers than its pool: a peer that sends gets more credit, one step per packet, while buffers
// are spare; when another peer waits for one, a peer above its first two gives one back; the
// buffers posted never exceed the plan; every message arrives intact.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "msg/msg.h"
#include "protocol/engine.hpp"
#include "protocol/receive_pool.hpp"
#include "scripted_transport.hpp"

namespace {

using msg::PacketType;
using msg::ReceivePlan;
using scripted::header;
using scripted::settle;

constexpr int kPoolTag = 9;

ReceivePlan plan(int size, int credits, int active, size_t max_posted) {
    ReceivePlan p;
    std::string why;
    REQUIRE(msg::plan_receives(size, credits, active, max_posted, &p, &why));
    return p;
}

// Rank `rank` as a correct sender to rank 0: it spends a credit per packet, keeps one back
// from new messages, and takes back the credit rank 0's packets to it carry.
struct Sender {
    int rank;
    int credits;
    size_t seen = 0;
    int sent = 0;
    void take_returned(const scripted::Transport &t) {
        for (; seen < t.sent.size(); ++seen)
            if (t.sent[seen].peer == rank) credits += static_cast<int>(t.sent[seen].hdr.credits);
    }
};

// The pool with every peer's window kept as PacketFlow keeps it: grown by a grant, shrunk
// by a reclaim.
struct Windowed {
    Windowed(int size, const ReceivePlan &plan)
        : pool(size, plan), windows(static_cast<size_t>(size), plan.base) {}
    msg::ReceivePool::Credit consumed(int peer) {
        using Credit = msg::ReceivePool::Credit;
        int &w = windows[static_cast<size_t>(peer)];
        const Credit c = pool.consumed(peer, w);
        w += c == Credit::Grant ? 1 : c == Credit::Reclaim ? -1 : 0;
        return c;
    }
    int window(int peer) const { return windows[static_cast<size_t>(peer)]; }
    size_t spare() const { return pool.spare(); }

    msg::ReceivePool pool;
    std::vector<int> windows;
};

std::vector<char> payload_of(int rank, int n) {
    return std::vector<char>(200, static_cast<char>(rank * 50 + n));
}

}  // namespace

TEST_CASE("a job no larger than its active peers posts every peer's whole window",
          "[receive_pool]") {
    ReceivePlan p = plan(5, 8, 16, 1024);
    CHECK(p.base == 8);
    CHECK(p.credits == 8);
    CHECK(p.posted == 4 * 10);
    CHECK(p.spare == 0);
    // A short receive queue lowers every window, as every rank computes alike.
    p = plan(101, 8, 200, 1024);
    CHECK(p.base == 8);
    CHECK(p.posted == 1000);
    p = plan(201, 8, 200, 1024);
    CHECK(p.base == 3);
    CHECK(p.credits == 3);
}

TEST_CASE("a larger job posts two buffers per peer and a pool for the active ones",
          "[receive_pool]") {
    ReceivePlan p = plan(101, 8, 16, 1u << 20);
    CHECK(p.base == 2);
    CHECK(p.credits == 8);
    CHECK(p.posted == 100 * 4);
    CHECK(p.spare == 16 * 6);
    // The pool is cut to the receive queue.
    p = plan(101, 8, 16, 450);
    CHECK(p.spare == 50);
    // Room for three a peer: one credit each, no pool.
    p = plan(301, 8, 16, 900);
    CHECK(p.base == 1);
    CHECK(p.credits == 1);
    CHECK(p.spare == 0);
    // Less: the job does not fit, and the reason says so.
    ReceivePlan none;
    std::string why;
    CHECK_FALSE(msg::plan_receives(1001, 8, 16, 1024, &none, &why));
    CHECK(why.find("1000 peers do not fit a receive queue of 1024") != std::string::npos);
}

TEST_CASE("msg_receive_memory gives what a job of N ranks allocates per rank", "[receive_pool]") {
    msg_config_t c;
    REQUIRE(msg_config_init(&c) == MSG_OK);
    c.buffer_size = 128 * 1024;
    c.credits = 8;
    c.active_peers = 16;
    size_t bytes = 0, buffers = 0;
    REQUIRE(msg_receive_memory(&c, 1, &bytes, &buffers) == MSG_OK);
    CHECK(bytes == 0);
    REQUIRE(msg_receive_memory(&c, 4, &bytes, &buffers) == MSG_OK);
    CHECK(buffers == 3 * 10);
    CHECK(bytes == 30 * c.buffer_size);
    // 1,000 ranks: 999 peers at four buffers and a pool of 16 * 6, where every peer's whole
    // window would take 999 * 10.
    REQUIRE(msg_receive_memory(&c, 1000, &bytes, &buffers) == MSG_OK);
    CHECK(buffers == 999 * 4 + 96);
    CHECK(bytes == buffers * c.buffer_size);
    CHECK(msg_receive_memory(&c, 0, &bytes, nullptr) == MSG_ERR_INVALID_ARG);
    CHECK(msg_receive_memory(&c, 4, nullptr, nullptr) == MSG_ERR_INVALID_ARG);
    c.credits = 0;
    CHECK(msg_receive_memory(&c, 4, &bytes, nullptr) == MSG_ERR_CONFIG);
}

TEST_CASE("credit moves from the peer that stopped to the one that waits", "[receive_pool]") {
    msg::EngineOptions o;
    o.eager_max = 1024;
    o.buffer_size = 16384;
    o.credits = 8;
    o.active_peers = 1;
    scripted::Transport t;
    msg::Engine engine(&t, 0, 5, o);
    REQUIRE(engine.init() == MSG_OK);
    // Four peers at two credits and two credit returns each; six spare.
    CHECK(engine.receive_buffers() == 4 * 4 + 6);
    CHECK(t.posted_receives() == 4 * 4);
    scripted::Sink sink;
    std::vector<std::vector<char>> bufs;
    bufs.reserve(200);
    auto receive = [&](int from) {
        bufs.emplace_back(200);
        REQUIRE(engine.irecv(from, kPoolTag, bufs.back().data(), 200, &sink, nullptr) == MSG_OK);
    };
    Sender s1{1, 2}, s2{2, 2};
    // Sends while it has credit beyond its reserve, up to `count` packets; the most credit it
    // ever held shows how far its window grew.
    auto pump = [&](Sender &s, int count, int *most) {
        for (int i = 0; i < count; ++i) {
            s.take_returned(t);
            *most = std::max(*most, s.credits);
            if (s.credits <= 1) return;
            receive(s.rank);
            msg::WireHeader h = header(PacketType::Eager, s.rank);
            h.tag = kPoolTag;
            h.len = 200;
            t.deliver(h, payload_of(s.rank, s.sent));
            --s.credits;
            ++s.sent;
            settle(engine);
            CHECK(t.posted_receives() <= engine.receive_buffers());
        }
    };
    int most1 = 0, most2 = 0;
    pump(s1, 40, &most1);
    CHECK(s1.sent == 40);
    // Rank 1's window grew to the whole of its credits: the pool is spent on it.
    CHECK(engine.stats().receive_grants == 6);
    CHECK(most1 >= 5);
    CHECK(t.posted_receives() == 4 * 4 + 6);
    // Rank 2 sends: it waits for the pool, and still moves at its first two.
    pump(s2, 10, &most2);
    CHECK(s2.sent == 10);
    CHECK(engine.stats().receive_grants == 6);
    // Rank 1 sends again: it gives back one buffer per packet while rank 2 waits.
    pump(s1, 3, &most1);
    CHECK(engine.stats().receive_reclaims >= 1);
    const uint64_t grants = engine.stats().receive_grants;
    pump(s2, 10, &most2);
    CHECK(engine.stats().receive_grants > grants);
    // Every message arrived intact, in order per sender.
    REQUIRE(sink.got.size() == bufs.size());
    int n1 = 0, n2 = 0;
    for (size_t i = 0; i < sink.got.size(); ++i) {
        INFO("message " << i);
        CHECK(sink.got[i].status == MSG_OK);
        const int from = sink.got[i].source;
        CHECK(bufs[i] == payload_of(from, from == 1 ? n1++ : n2++));
    }
    CHECK(engine.stats().bad_headers == 0);
}

TEST_CASE("a peer at its first two gets credit back from one that waits for more itself",
          "[receive_pool]") {
    msg::ReceivePlan p = plan(6, 4, 2, 1024);
    REQUIRE(p.base == 2);
    REQUIRE(p.spare == 4);
    Windowed pool(6, p);
    using Credit = msg::ReceivePool::Credit;
    // Ranks 1 to 4 each send one packet: each gets one of the four spare buffers.
    for (int r = 1; r <= 4; ++r) CHECK(pool.consumed(r) == Credit::Grant);
    CHECK(pool.spare() == 0);
    // Rank 5 finds none; ranks 1 to 4 still want more (3 of 4) but hold more than it.
    CHECK(pool.consumed(5) == Credit::Return);
    CHECK(pool.consumed(1) == Credit::Reclaim);
    CHECK(pool.window(1) == 2);
    CHECK(pool.consumed(5) == Credit::Grant);
    CHECK(pool.window(5) == 3);
    // Rank 1, back at its base, still waits: the next above it gives one back, and rank 1
    // takes it.
    CHECK(pool.consumed(2) == Credit::Reclaim);
    CHECK(pool.consumed(1) == Credit::Grant);
    // While every peer wants more than the pool holds, the extra buffers go round.
    // A peer at its top that waits for nothing keeps what it has while no peer is at its base.
    Windowed full(3, plan(3, 4, 1, 1024));
    CHECK(full.consumed(1) == Credit::Grant);
    CHECK(full.consumed(1) == Credit::Grant);
    CHECK(full.window(1) == 4);
    CHECK(full.consumed(1) == Credit::Return);
    CHECK(full.consumed(2) == Credit::Return);  // rank 2 finds the pool spent, and waits
    CHECK(full.consumed(1) == Credit::Reclaim);
    CHECK(full.consumed(2) == Credit::Grant);
    CHECK(full.consumed(1) == Credit::Return);  // rank 2 above its base: rank 1 keeps 3
    // No window ever goes below the base or above the top.
    for (int i = 0; i < 200; ++i) {
        const int r = 1 + (i * 7) % 5;
        pool.consumed(r);
        CHECK(pool.window(r) >= p.base);
        CHECK(pool.window(r) <= p.credits);
    }
    int held = 0;
    for (int r = 1; r <= 5; ++r) held += pool.window(r) - p.base;
    CHECK(static_cast<size_t>(held) + pool.spare() == p.spare);
}
