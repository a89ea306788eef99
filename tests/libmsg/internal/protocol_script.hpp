// What the per-protocol tests share: an engine on a scripted transport as rank 0 of a small
// job, the packets its peers would send, and message bytes that show where each byte came from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "protocol/long_protocol.hpp"
#include "scripted_transport.hpp"

namespace script {

using msg::PacketType;
using scripted::header;
using scripted::settle;

constexpr int kTag = 9;

inline msg::EngineOptions options(int protocol, bool restricted = false) {
    msg::EngineOptions o;
    o.long_protocol = protocol;
    o.restricted = restricted;
    o.eager_max = 1024;
    o.buffer_size = 16384;
    o.credits = 64;  // the tests never return credit
    return o;
}

// Bytes that differ from one offset to the next and between seeds.
inline std::vector<char> pattern(size_t n, int seed) {
    std::vector<char> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed) * 7) >> 3);
    return v;
}

// Keeps every completion, and how many packets the engine had sent when it came.
class Sink final : public msg::CompletionSink {
  public:
    explicit Sink(const scripted::Transport &t) : t_(t) {}
    void deliver(const msg_completion_t &c) override {
        got.push_back(c);
        sent_before.push_back(t_.sent.size());
    }
    std::vector<msg_completion_t> got;
    std::vector<size_t> sent_before;

  private:
    const scripted::Transport &t_;
};

struct Job {
    Job(int protocol, int size = 2, bool restricted = false)
        : engine(&transport, 0, size, options(protocol, restricted)), sink(transport) {
        REQUIRE(engine.init() == MSG_OK);
    }
    uint64_t bad() const { return engine.stats().bad_headers; }
    size_t chunk() const { return engine.chunk_payload(); }

    scripted::Transport transport;
    msg::Engine engine;
    Sink sink;
};

// The one completion so far, with its status and bytes.
inline void check_one_completion(const Job &job, int status, uint64_t bytes) {
    REQUIRE(job.sink.got.size() == 1);
    CHECK(job.sink.got[0].status == status);
    CHECK(job.sink.got[0].bytes == bytes);
}

// Rank 0 posts a receive into buf from rank 1, and rank 1's RTS for send send_id, of buf's
// size, arrives: the CTS packets the engine has sent.
inline std::vector<scripted::Packet> grant(Job &job, std::vector<char> &buf, uint64_t send_id);

// Packets as rank `src` would send them.
inline msg::WireHeader rts(int src, uint64_t send_id, uint64_t len, uint32_t flags = 0,
                           const void *addr = nullptr) {
    msg::WireHeader h = header(PacketType::Rts, src);
    h.tag = kTag;
    h.flags = flags;
    h.send_id = send_id;
    h.len = len;
    h.offset = reinterpret_cast<uint64_t>(addr);
    h.key = addr != nullptr ? scripted::kKey : 0;
    return h;
}

inline msg::WireHeader cts(int src, uint64_t send_id, uint64_t recv_id, uint64_t len) {
    msg::WireHeader h = header(PacketType::Cts, src);
    h.send_id = send_id;
    h.recv_id = recv_id;
    h.len = len;
    return h;
}

inline msg::WireHeader go(int src, uint64_t send_id, uint64_t recv_id) {
    msg::WireHeader h = header(PacketType::Go, src);
    h.send_id = send_id;
    h.recv_id = recv_id;
    return h;
}

inline msg::WireHeader fin(int src, uint64_t send_id, uint64_t recv_id, uint64_t len,
                           uint32_t flags = 0) {
    msg::WireHeader h = header(PacketType::Fin, src);
    h.flags = flags;
    h.send_id = send_id;
    h.recv_id = recv_id;
    h.len = len;
    return h;
}

// Chunk `index` of `data` for receive recv_id, as the sender cuts it.
struct Chunk {
    msg::WireHeader h;
    std::vector<char> payload;
};
inline Chunk chunk(int src, uint64_t send_id, uint64_t recv_id, const std::vector<char> &data,
                   size_t accepted, size_t piece, size_t index) {
    const size_t off = index * piece;
    const size_t n = std::min(piece, accepted - off);
    Chunk c{header(PacketType::Chunk, src), {}};
    c.h.send_id = send_id;
    c.h.recv_id = recv_id;
    c.h.offset = off;
    c.h.len = n;
    c.payload.assign(data.begin() + static_cast<long>(off),
                     data.begin() + static_cast<long>(off + n));
    return c;
}

inline std::vector<scripted::Packet> grant(Job &job, std::vector<char> &buf, uint64_t send_id) {
    REQUIRE(job.engine.irecv(1, kTag, buf.data(), buf.size(), &job.sink, nullptr) == MSG_OK);
    job.transport.deliver(rts(1, send_id, buf.size()));
    settle(job.engine);
    return job.transport.of_type(PacketType::Cts);
}

}  // namespace script
