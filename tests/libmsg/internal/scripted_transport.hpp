// A transport whose peers are the test: every packet the engine sends is kept for inspection,
// packets are delivered into the engine's posted receives by hand, and RDMA reads and writes
// stay in flight until the test completes them (or fails them).
#pragma once

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "protocol/engine.hpp"
#include "protocol/wire.hpp"
#include "queued_transport.hpp"
#include "transport/transport.hpp"

namespace scripted {

constexpr uint64_t kKey = 0x5eed;

class Region final : public msg::MemoryRegion {
  public:
    void *desc() const override { return nullptr; }
    uint64_t remote_key() const override { return kKey; }
    uint64_t remote_address(const void *p) const override { return reinterpret_cast<uint64_t>(p); }
};

struct Packet {
    int peer;
    msg::WireHeader hdr;
    std::vector<char> payload;
};

struct Write {
    int peer;
    const char *local;
    size_t len;
    uint64_t remote;
    uint64_t key;
    msg::OpContext *ctx;
    bool done = false;
};

class Transport final : public testtransport::QueuedTransport {
  public:
    // Largest single write: small, so that a message takes several.
    size_t piece = 64 * 1024;
    // Registrations asking for this access fail (0: none fail).
    unsigned refuse_access = 0;

    // Sends to this rank are refused as if its connection had broken (-1: none are).
    int refuse_sends_to = -1;

    std::vector<Packet> sent;
    std::vector<Write> writes;
    // RDMA reads, kept until the test completes them when reads are on; refused otherwise.
    bool reads_on = false;
    std::vector<Write> reads;

    // Copies in the call to peers' memory (write_now), as on one host: off unless a test turns
    // them on; write_now_error fails them with that errno (0: they succeed).
    bool copies_now = false;
    int write_now_error = 0;
    std::vector<Write> copies;  // each write_now, in order

    std::string name() const override { return "scripted"; }
    uint64_t registrations = 0;

    bool supports_rdma_read() const override { return true; }
    bool supports_rdma_write() const override { return true; }
    size_t max_transfer() const override { return piece; }
    size_t max_posted_receives() const override { return 1024; }

    int register_memory(const void *, size_t, unsigned access,
                        std::unique_ptr<msg::MemoryRegion> *out) override {
        if (refuse_access != 0 && (access & refuse_access) != 0) return -ENOMEM;
        *out = std::make_unique<Region>();
        ++registrations;
        return 0;
    }
    uint64_t registrations_made() const override { return registrations; }
    int post_send(int peer, const struct iovec *iov, void **, size_t count,
                  msg::OpContext *ctx) override {
        if (peer == refuse_sends_to) return -ECONNRESET;
        Packet p{peer, {}, {}};
        REQUIRE(iov[0].iov_len == sizeof p.hdr);
        std::memcpy(&p.hdr, iov[0].iov_base, sizeof p.hdr);
        if (count > 1) {
            const char *data = static_cast<const char *>(iov[1].iov_base);
            p.payload.assign(data, data + iov[1].iov_len);
        }
        sent.push_back(std::move(p));
        done_.push_back({ctx, msg::OpKind::Send, 0, 0, -1});
        return 0;
    }
    int post_read(int peer, void *local, size_t len, void *, uint64_t remote_addr, uint64_t key,
                  msg::OpContext *ctx) override {
        if (!reads_on) return -ENOTSUP;
        reads.push_back({peer, static_cast<const char *>(local), len, remote_addr, key, ctx});
        return 0;
    }
    int post_write(int peer, const void *local, size_t len, void *, uint64_t remote_addr,
                   uint64_t key, msg::OpContext *ctx) override {
        writes.push_back({peer, static_cast<const char *>(local), len, remote_addr, key, ctx});
        return 0;
    }
    bool writes_now(int) const override { return copies_now; }
    int write_now(int peer, const void *local, size_t len, uint64_t remote_addr,
                  uint64_t key) override {
        if (!copies_now) return -ENOTSUP;
        if (write_now_error != 0) return -write_now_error;
        std::memcpy(reinterpret_cast<char *>(remote_addr), local, len);
        copies.push_back({peer, static_cast<const char *>(local), len, remote_addr, key, nullptr});
        return 0;
    }
    bool prepare_wait() override { return false; }
    bool fd_covers_own_operations() const override { return true; }

    // A packet lands in the oldest posted receive. The fabric names as its sender the rank the
    // header claims, unless the test says it came from another (a forgery).
    void deliver(const msg::WireHeader &h, const std::vector<char> &payload = {}) {
        deliver_from(static_cast<int>(h.src), h, payload);
    }
    void deliver_from(int from, const msg::WireHeader &h, const std::vector<char> &payload = {}) {
        REQUIRE(!posted_.empty());
        Posted p = posted_.front();
        posted_.pop_front();
        REQUIRE(sizeof h + payload.size() <= p.len);
        std::memcpy(p.buf, &h, sizeof h);
        if (!payload.empty()) std::memcpy(p.buf + sizeof h, payload.data(), payload.size());
        done_.push_back({p.ctx, msg::OpKind::Recv, 0, sizeof h + payload.size(), from});
    }
    // Write i completes: its bytes are copied to where it was aimed, or it fails with error.
    void finish_write(size_t i, int error = 0) {
        Write &w = writes.at(i);
        REQUIRE(!w.done);
        w.done = true;
        if (error == 0) std::memcpy(reinterpret_cast<char *>(w.remote), w.local, w.len);
        done_.push_back({w.ctx, msg::OpKind::Write, error, w.len, -1});
    }
    // Read i completes: the bytes it was aimed at are copied into the engine's buffer, or it
    // fails with error.
    void finish_read(size_t i, int error = 0) {
        Write &r = reads.at(i);
        REQUIRE(!r.done);
        r.done = true;
        if (error == 0)
            std::memcpy(const_cast<char *>(r.local), reinterpret_cast<const char *>(r.remote),
                        r.len);
        done_.push_back({r.ctx, msg::OpKind::Read, error, r.len, -1});
    }
    size_t reads_in_flight() const {
        size_t n = 0;
        for (const Write &r : reads) n += r.done ? 0 : 1;
        return n;
    }
    size_t posted_receives() const { return posted_.size(); }
    size_t writes_in_flight() const {
        size_t n = 0;
        for (const Write &w : writes) n += w.done ? 0 : 1;
        return n;
    }
    // Packets of one type sent so far.
    std::vector<Packet> of_type(msg::PacketType t) const {
        std::vector<Packet> out;
        for (const Packet &p : sent)
            if (p.hdr.type == t) out.push_back(p);
        return out;
    }
};

class Sink final : public msg::CompletionSink {
  public:
    void deliver(const msg_completion_t &c) override { got.push_back(c); }
    std::vector<msg_completion_t> got;
};

// A header as rank `src` would send it.
inline msg::WireHeader header(msg::PacketType type, int src) {
    msg::WireHeader h;
    std::memset(&h, 0, sizeof h);
    h.magic = msg::kWireMagic;
    h.version = msg::kWireVersion;
    h.type = type;
    h.src = static_cast<uint32_t>(src);
    return h;
}

// Runs the engine until nothing more happens.
inline void settle(msg::Engine &engine) {
    for (int i = 0; i < 1000 && engine.progress(); ++i) {
    }
}

}  // namespace scripted
