// Fuzz target: libmsg's engine (header checks, matching, credits, long-message
// and chunk bookkeeping) fed forged packets through an in-memory transport.
// Every byte of message data is 0xA5, so a receive that completes with a hole
// (a byte never written) is caught, as is any write outside a posted buffer.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "../../libmsg/internal/queued_transport.hpp"
#include "protocol/engine.hpp"

namespace {

constexpr uint8_t kData = 0xA5;
constexpr int kJob = 3;  // this engine is rank 0
constexpr size_t kBuffer = sizeof(msg::WireHeader) + 512;

[[noreturn]] void broken(const char *what) {
    std::fprintf(stderr, "fuzz_engine: %s\n", what);
    std::abort();
}

// Reads the input front to back; past its end every value is 0.
class Input {
  public:
    Input(const uint8_t *d, size_t n) : d_(d), n_(n) {}
    bool more() const { return at_ < n_; }
    uint8_t u8() { return at_ < n_ ? d_[at_++] : 0; }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }

  private:
    const uint8_t *d_;
    size_t n_;
    size_t at_ = 0;
};

class FakeRegion : public msg::MemoryRegion {
  public:
    void *desc() const override { return nullptr; }
    uint64_t remote_key() const override { return 0x6b6579; }
    uint64_t remote_address(const void *p) const override { return reinterpret_cast<uintptr_t>(p); }
};

// Sends, reads and writes complete at the next poll; a read brings message
// data; receives wait for packets the input forges.
class FakeTransport : public testtransport::QueuedTransport {
  public:
    FakeTransport(bool read, bool write) : read_(read), write_(write) {}

    std::string name() const override { return "fuzz"; }
    bool supports_rdma_read() const override { return read_; }
    bool supports_rdma_write() const override { return write_; }
    size_t max_transfer() const override { return 1u << 20; }
    size_t max_posted_receives() const override { return 64; }
    int register_memory(const void *addr, size_t len, unsigned access,
                        std::unique_ptr<msg::MemoryRegion> *out) override {
        // A write target is where the peer's writes land: model them as done.
        if (access & msg::kRemoteWrite) std::memset(const_cast<void *>(addr), kData, len);
        *out = std::make_unique<FakeRegion>();
        return 0;
    }
    uint64_t registrations_made() const override { return 0; }
    int post_send(int peer, const struct iovec *iov, void **, size_t count,
                  msg::OpContext *ctx) override {
        if (peer <= 0 || peer >= kJob) broken("a send to a rank outside the job");
        if (count < 1 || iov[0].iov_len != sizeof(msg::WireHeader)) broken("a send without header");
        done_.push_back({ctx, msg::OpKind::Send, 0, 0, -1});
        return 0;
    }
    int post_read(int peer, void *local, size_t len, void *, uint64_t, uint64_t,
                  msg::OpContext *ctx) override {
        if (peer <= 0 || peer >= kJob) broken("a read from a rank outside the job");
        std::memset(local, kData, len);
        done_.push_back({ctx, msg::OpKind::Read, 0, 0, -1});
        return 0;
    }
    int post_write(int peer, const void *local, size_t len, void *, uint64_t, uint64_t,
                   msg::OpContext *ctx) override {
        if (peer <= 0 || peer >= kJob) broken("a write to a rank outside the job");
        volatile uint8_t sum = 0;  // the transport reads every byte it writes
        for (size_t i = 0; i < len; ++i) sum = sum ^ static_cast<const uint8_t *>(local)[i];
        done_.push_back({ctx, msg::OpKind::Write, 0, 0, -1});
        return 0;
    }
    bool prepare_wait() override { return true; }
    bool fd_covers_own_operations() const override { return false; }

    // Lands a packet in the oldest posted receive buffer, as the fabric would,
    // naming `from` as its sender (-1: a source outside the job).
    void arrive(const msg::WireHeader &h, size_t payload, int from) {
        if (posted_.empty()) return;
        Posted p = posted_.front();
        posted_.pop_front();
        size_t bytes = sizeof h + payload;
        if (bytes > p.len) bytes = p.len;
        std::memcpy(p.buf, &h, sizeof h);
        std::memset(p.buf + sizeof h, kData, bytes - sizeof h);
        done_.push_back({p.ctx, msg::OpKind::Recv, 0, bytes, from});
    }

  private:
    bool read_, write_;
};

struct Buffer {
    std::vector<char> bytes;
    bool is_send = false;
    bool completed = false;
};

// Checks every completion against the buffer it names.
class Sink : public msg::CompletionSink {
  public:
    explicit Sink(std::deque<Buffer> &buffers) : buffers_(buffers) {}
    void deliver(const msg_completion_t &c) override {
        Buffer &b = buffers_[reinterpret_cast<uintptr_t>(c.cookie)];
        if (b.completed) broken("an operation completed twice");
        b.completed = true;
        if (b.is_send || (c.status != MSG_OK && c.status != MSG_ERR_TRUNCATED)) return;
        if (c.bytes > b.bytes.size()) broken("a receive longer than its buffer");
        for (size_t i = 0; i < c.bytes; ++i)
            if (static_cast<uint8_t>(b.bytes[i]) != kData)
                broken("a receive completed with bytes never received");
    }

  private:
    std::deque<Buffer> &buffers_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Input in(data, size);
    const uint8_t config = in.u8();
    msg::EngineOptions opts;
    opts.long_protocol = (config & 3) % 3;
    opts.restricted = (config & 4) != 0;
    opts.eager_max = 256;
    opts.buffer_size = kBuffer;
    opts.credits = 4;
    // Buffers outlive the engine: it may still point into them when it is destroyed.
    std::deque<Buffer> buffers;
    Sink sink(buffers);
    FakeTransport transport((config & 8) != 0, (config & 16) != 0);
    msg::Engine engine(&transport, 0, kJob, opts);
    if (engine.init() != MSG_OK) broken("init failed");
    engine.start_handshake();

    while (in.more()) {
        switch (in.u8() % 4) {
            case 0: {                                      // irecv
                const int src = in.u8() % (kJob + 1) - 1;  // -1: any source
                const int tag = in.u8() % 4 - 1;           // -1: any tag
                Buffer &b = buffers.emplace_back();
                b.bytes.assign(in.u16() % 2048, 0);
                void *cookie = reinterpret_cast<void *>(buffers.size() - 1);
                if (engine.irecv(src, tag, b.bytes.data(), b.bytes.size(), &sink, cookie) != MSG_OK)
                    b.completed = true;
                break;
            }
            case 1: {  // isend
                const int dest = 1 + in.u8() % (kJob - 1);
                const int tag = in.u8() % 3;
                Buffer &b = buffers.emplace_back();
                b.is_send = true;
                b.bytes.assign(in.u16() % 2048, static_cast<char>(kData));
                void *cookie = reinterpret_cast<void *>(buffers.size() - 1);
                if (engine.isend(dest, tag, b.bytes.data(), b.bytes.size(), &sink, cookie) !=
                    MSG_OK)
                    b.completed = true;
                break;
            }
            case 2: {  // a packet from a peer, its fields from the input
                msg::WireHeader h{};
                const uint8_t shape = in.u8();
                h.magic = (shape & 1) ? in.u16() : msg::kWireMagic;
                h.version = (shape & 2) ? in.u8() : msg::kWireVersion;
                h.type = static_cast<msg::PacketType>(in.u8() % 10);
                h.src = in.u8() % (kJob + 1);
                h.credits = in.u8() % 8;
                h.tag = static_cast<int8_t>(in.u8()) % 4;
                h.flags = in.u8() % 4;
                h.len = in.u16() % 4096;
                h.send_id = in.u8() % 16;
                h.recv_id = in.u8() % 16;
                h.offset = (shape & 4) ? in.u16() : static_cast<uint64_t>(in.u8() % 8) * 512;
                h.key = in.u8();
                // Usually the payload the header announces; sometimes a lie.
                const bool data =
                    h.type == msg::PacketType::Eager || h.type == msg::PacketType::Chunk;
                const size_t payload = (shape & 8) ? in.u16() % 1024 : data ? h.len : 0;
                // The fabric names the rank the header claims, or (a forgery) another one.
                int from = h.src < kJob ? static_cast<int>(h.src) : -1;
                if (shape & 16) from = static_cast<int>((h.src + 1) % kJob);
                transport.arrive(h, payload, from);
                break;
            }
            default:
                engine.progress();
        }
    }
    for (int i = 0; i < 64 && engine.progress(); ++i) {
    }
    engine.abort_all(MSG_ERR_CANCELED);
    return 0;
}
