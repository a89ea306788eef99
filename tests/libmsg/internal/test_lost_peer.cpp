// A send that fails at once (the transport refuses it) loses its peer in the middle of whatever
// was sending it; the request that was being served must end exactly once, with
// MSG_ERR_PEER_FAILED, and nothing may touch it afterwards (an AddressSanitizer build checks the
// latter).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "protocol_script.hpp"

namespace {

using namespace script;

void check_one_failure(const Job &job, int op) {
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].op == op);
    CHECK(job.sink.got[0].status == MSG_ERR_PEER_FAILED);
    CHECK(job.sink.got[0].bytes == 0);
    CHECK(job.engine.peer_failed(1));
}

}  // namespace

TEST_CASE("the CTS of a receive of no bytes cannot be sent", "[lost_peer]") {
    Job job(MSG_PROTOCOL_SENDRECV);
    auto &t = job.transport;
    REQUIRE(job.engine.irecv(1, kTag, nullptr, 0, &job.sink, nullptr) == MSG_OK);
    t.refuse_sends_to = 1;
    t.deliver(rts(1, 10, 5000));
    settle(job.engine);
    CHECK(t.of_type(PacketType::Cts).empty());
    check_one_failure(job, MSG_OP_RECV);
}

TEST_CASE("the FIN of an RDMA read receive cannot be sent", "[lost_peer]") {
    Job job(MSG_PROTOCOL_RDMA);
    auto &t = job.transport;
    t.reads_on = true;
    const auto data = pattern(1000, 1);
    std::vector<char> buf(data.size());
    REQUIRE(job.engine.irecv(1, kTag, buf.data(), buf.size(), &job.sink, nullptr) == MSG_OK);
    t.deliver(rts(1, 20, data.size(), msg::kFlagRdmaRead, data.data()));
    settle(job.engine);
    REQUIRE(t.reads.size() == 1);
    t.refuse_sends_to = 1;
    t.finish_read(0);
    settle(job.engine);
    CHECK(t.of_type(PacketType::Fin).empty());
    check_one_failure(job, MSG_OP_RECV);
}

TEST_CASE("the FIN of an RDMA write send cannot be sent", "[lost_peer]") {
    Job job(MSG_PROTOCOL_RDMA_WRITE);
    auto &t = job.transport;
    const auto data = pattern(3000, 2);
    std::vector<char> target(data.size());
    REQUIRE(job.engine.isend(1, kTag, data.data(), data.size(), &job.sink, nullptr) == MSG_OK);
    settle(job.engine);
    msg::WireHeader grant = cts(1, t.of_type(PacketType::Rts).at(0).hdr.send_id, 5, data.size());
    grant.flags = msg::kFlagRdmaWrite;
    grant.offset = reinterpret_cast<uint64_t>(target.data());
    t.deliver(grant);
    settle(job.engine);
    REQUIRE(t.writes.size() == 1);
    t.refuse_sends_to = 1;
    t.finish_write(0);
    settle(job.engine);
    CHECK(t.of_type(PacketType::Fin).empty());
    check_one_failure(job, MSG_OP_SEND);
}

TEST_CASE("the credit a receive gives back for a held message cannot be sent", "[lost_peer]") {
    // Two credits, and a bound of one unexpected message: the second one's credit is held back
    // until a receive takes the first.
    msg::EngineOptions o = options(MSG_PROTOCOL_SENDRECV);
    o.credits = 2;
    o.unexpected_count = 1;
    scripted::Transport t;
    msg::Engine engine(&t, 0, 2, o);
    REQUIRE(engine.init() == MSG_OK);
    scripted::Sink sink;
    for (int i = 0; i < 2; ++i) {
        msg::WireHeader e = header(PacketType::Eager, 1);
        e.tag = kTag;
        e.len = 4;
        t.deliver(e, {'a', 'b', 'c', static_cast<char>('0' + i)});
        settle(engine);
    }
    CHECK(engine.unexpected_count(1) == 2);
    const size_t credits_sent = t.of_type(PacketType::Credit).size();
    t.refuse_sends_to = 1;
    std::vector<char> buf(4);
    REQUIRE(engine.irecv(1, kTag, buf.data(), buf.size(), &sink, nullptr) == MSG_OK);
    CHECK(t.of_type(PacketType::Credit).size() == credits_sent);
    REQUIRE(sink.got.size() == 1);
    CHECK(sink.got[0].status == MSG_ERR_PEER_FAILED);
    CHECK(engine.peer_failed(1));
}
