// The shm transport: its set-up (region, doorbell, cross-memory blob), the
// rings each way between every pair of ranks, and the completions it makes
// itself. Every call comes under the context's fabric lock (api/core.hpp's
// Core::mu: the engine is called only with it held), so the transport keeps
// no lock of its own but the registration table's; and no call ever waits on
// a peer: a full ring is -EAGAIN, an empty one no packet.
#include "transport/shm/shm_transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "common/log.hpp"
#include "transport/host/cma.hpp"
#include "transport/host/doorbell.hpp"
#include "transport/shm/region.hpp"
#include "transport/shm/registrations.hpp"
#include "transport/shm/ring.hpp"
#include "transport/shm/shm_address.hpp"

namespace msg {
namespace {

// Receives that may wait posted at once, as libfabric's shm provider allows.
constexpr size_t kMaxPosted = 1024;
// Rings hold two of the engine's largest packets, and at least 64 KiB.
constexpr uint64_t kMinRingCells = 1024;

class ShmMemoryRegion final : public MemoryRegion {
  public:
    ShmMemoryRegion(std::shared_ptr<ShmRegistrationTable> table, uint64_t key)
        : table_(std::move(table)), key_(key) {}
    ~ShmMemoryRegion() override {
        if (key_ != 0) table_->remove(key_);
    }
    ShmMemoryRegion(const ShmMemoryRegion &) = delete;
    ShmMemoryRegion &operator=(const ShmMemoryRegion &) = delete;

    void *desc() const override { return nullptr; }
    uint64_t remote_key() const override { return key_; }
    uint64_t remote_address(const void *p) const override { return reinterpret_cast<uint64_t>(p); }

  private:
    std::shared_ptr<ShmRegistrationTable> table_;
    uint64_t key_;
};

class ShmTransport final : public Transport {
  public:
    explicit ShmTransport(const TransportSettings &settings)
        : ranks_(settings.ranks),
          cells_(std::max<uint64_t>(2 * ring_cells_for(settings.buffer_size), kMinRingCells)),
          one_host_(settings.one_host),
          use_cma_(settings.shm_cma) {}

    int open(std::string *error);

    std::string name() const override { return "shm"; }
    std::vector<uint8_t> address() const override { return address_; }
    int connect(const std::vector<std::vector<uint8_t>> &addresses) override;
    bool needs_local_registration() const override { return false; }
    // Cross-memory copies complete in the call: a write is in the peer's
    // memory before any later send.
    bool supports_rdma_read() const override { return cma_all_; }
    bool supports_rdma_write() const override { return cma_all_; }
    size_t max_transfer() const override { return size_t{1} << 30; }
    size_t max_iov() const override { return 8; }
    size_t max_posted_receives() const override { return kMaxPosted; }
    int register_memory(const void *addr, size_t len, unsigned access,
                        std::unique_ptr<MemoryRegion> *out) override;
    uint64_t registrations_made() const override { return registrations_; }
    int post_send(int peer, const struct iovec *iov, void **desc, size_t count,
                  OpContext *ctx) override;
    int post_recv(void *buf, size_t len, void *desc, OpContext *ctx) override;
    int post_read(int peer, void *local, size_t len, void *, uint64_t remote_addr, uint64_t key,
                  OpContext *ctx) override {
        return rma(peer, local, len, remote_addr, key, OpKind::Read, ctx);
    }
    bool writes_now(int peer) const override { return cma_reaches(peer); }
    int write_now(int peer, const void *local, size_t len, uint64_t remote_addr,
                  uint64_t key) override;
    int post_write(int peer, const void *local, size_t len, void *, uint64_t remote_addr,
                   uint64_t key, OpContext *ctx) override {
        return rma(peer, const_cast<void *>(local), len, remote_addr, key, OpKind::Write, ctx);
    }
    int poll(TransportCompletion *out, int max) override;
    void shutdown() override {
        down_ = true;
        posted_.clear();
        done_.clear();
    }
    int wait_fd() const override { return doorbell_ ? doorbell_->fd() : -1; }
    bool prepare_wait() override;
    void finish_wait() override {
        if (doorbell_) doorbell_->woke();
    }
    // Our own operations complete in the call that posts them.
    bool fd_covers_own_operations() const override { return true; }
    // Every peer has mapped our region and doorbell flag: the names can go.
    void peers_connected() override {
        region_->unlink();
        if (doorbell_) doorbell_->unlink_name();
    }

  private:
    struct Posted {
        void *buf;
        size_t len;
        OpContext *ctx;
    };
    struct Peer {
        std::unique_ptr<ShmRegion> region;  // theirs, holding our ring to them
        RingWriter out;
        RingReader in;  // their ring in our region
        bool broken = false;
    };
    bool peer_ok(int peer) const {
        return peer >= 0 && peer < ranks_ && peer != self_ && peers_[peer].region != nullptr;
    }
    // A peer cross-memory copies reach (reads, writes, write_now).
    bool cma_reaches(int peer) const { return cma_ && peer_ok(peer) && cma_->usable(peer); }
    int rma(int peer, void *local, size_t len, uint64_t remote, uint64_t key, OpKind kind,
            OpContext *ctx);
    int copy(int peer, void *local, size_t len, uint64_t remote, uint64_t key, OpKind kind) const;
    int attach_peers(const std::vector<std::string> &regions);
    int take_arrivals(TransportCompletion *out, int max);
    int take_from(int peer, TransportCompletion *out, int max);

    int ranks_;
    uint64_t cells_;
    bool one_host_, use_cma_;
    int self_ = -1;
    std::shared_ptr<ShmRegion> region_ = std::make_shared<ShmRegion>();
    std::shared_ptr<ShmRegistrationTable> table_;
    std::vector<uint8_t> address_;
    std::vector<Peer> peers_;
    FifoRing<Posted> posted_;
    FifoRing<TransportCompletion> done_;  // sends, reads and writes, done when posted
    std::unique_ptr<Doorbell> doorbell_;
    std::unique_ptr<CrossMemory> cma_;
    bool cma_all_ = true;  // every peer can be read and written by cross-memory copies
    bool down_ = false;
    int next_peer_ = 0;  // the ring polled first, in turn, so that no sender starves
    uint64_t registrations_ = 0;
};

int ShmTransport::open(std::string *error) {
    if (!one_host_) {
        *error =
            "the shm transport moves data only between ranks of one host, and this job spans "
            "several; use VIADUCT_TRANSPORT=ofi or verbs";
        return -EINVAL;
    }
    if (ranks_ < 2) return *error = "the shm transport needs a job of two or more ranks", -EINVAL;
    // A random part: a name left by a killed process whose pid comes round
    // again cannot collide. The pid lets msgrun remove a dead rank's region.
    std::random_device rd;
    char name[64];
    std::snprintf(name, sizeof name, "/viaduct-%d-shm-%08x%08x", static_cast<int>(getpid()), rd(),
                  rd());
    if (int rc = region_->create(name, ranks_, cells_, error); rc != 0) return rc;
    table_ = std::make_shared<ShmRegistrationTable>(region_);
    auto bell = std::make_unique<Doorbell>();
    std::string why;
    if (bell->open(&why))
        doorbell_ = std::move(bell);
    else
        log_debug("no doorbell (%s): the progress thread will poll", why.c_str());
    if (use_cma_) cma_ = std::make_unique<CrossMemory>();
    cma_all_ = cma_ != nullptr;
    address_ = pack_shm_address(name, cma_ ? cma_->blob() : std::vector<uint8_t>{},
                                doorbell_ ? doorbell_->name() : std::vector<uint8_t>{});
    log_debug("transport shm: rings of %llu cells, doorbell %d, cross-memory copies %d",
              static_cast<unsigned long long>(cells_), doorbell_ != nullptr, cma_ != nullptr);
    return 0;
}

int ShmTransport::connect(const std::vector<std::vector<uint8_t>> &addresses) {
    if (addresses.size() != static_cast<size_t>(ranks_)) return -EINVAL;
    // Every address is checked before any names a file to open.
    std::vector<PeerAddress> parsed(addresses.size());
    std::vector<std::string> regions(addresses.size());
    for (size_t r = 0; r < addresses.size(); ++r) {
        if (addresses[r] == address_) self_ = static_cast<int>(r);
        if (const char *why =
                parse_shm_address(addresses[r], CrossMemory::kBlobSize, &parsed[r], &regions[r])) {
            log_error("rank %zu sent a malformed shm address (%zu bytes): %s", r,
                      addresses[r].size(), why);
            return -EINVAL;
        }
        for (size_t q = 0; q < r; ++q)
            if (regions[q] == regions[r]) {
                log_error("ranks %zu and %zu sent the same shm region", q, r);
                return -EINVAL;
            }
    }
    if (self_ < 0) return -EINVAL;
    if (int rc = attach_peers(regions); rc != 0) return rc;
    if (int rc = connect_host_peers(doorbell_.get(), cma_.get(), parsed, self_); rc != 0) return rc;
    if (cma_)
        for (int r = 0; r < ranks_; ++r)
            if (r != self_ && !cma_->usable(r)) cma_all_ = false;
    if (!cma_all_) log_debug("shm: no cross-memory copies; long messages go by send/recv");
    return 0;
}

int ShmTransport::attach_peers(const std::vector<std::string> &regions) {
    peers_.resize(static_cast<size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) {
        if (r == self_) continue;
        Peer &p = peers_[static_cast<size_t>(r)];
        auto region = std::make_unique<ShmRegion>();
        std::string why;
        if (region->attach(regions[static_cast<size_t>(r)], ranks_, cells_, &why) != 0) {
            log_error("rank %d's shared-memory region: %s", r, why.c_str());
            return -EINVAL;
        }
        p.out = RingWriter(region->indices(self_), region->cells(self_), cells_);
        p.in = RingReader(region_->indices(r), region_->cells(r), cells_);
        p.region = std::move(region);
    }
    return 0;
}

int ShmTransport::register_memory(const void *addr, size_t len, unsigned access,
                                  std::unique_ptr<MemoryRegion> *out) {
    uint64_t key = 0;
    // Local buffers need nothing; only what peers may reach is published.
    if ((access & (kRemoteRead | kRemoteWrite)) != 0) {
        key = table_->add(addr, len, access & (kRemoteRead | kRemoteWrite));
        if (key == 0) {
            log_error("shm: all %zu registrations are in use", kShmRegistrations);
            return -ENOSPC;
        }
    }
    ++registrations_;
    *out = std::make_unique<ShmMemoryRegion>(table_, key);
    return 0;
}

int ShmTransport::post_send(int peer, const struct iovec *iov, void **, size_t count,
                            OpContext *ctx) {
    ctx->posted = OpKind::Send;
    if (down_) return -ESHUTDOWN;
    if (!peer_ok(peer)) return -EINVAL;
    if (int rc = peers_[static_cast<size_t>(peer)].out.push(iov, count); rc != 0) return rc;
    size_t len = 0;
    for (size_t i = 0; i < count; ++i) len += iov[i].iov_len;
    done_.push({ctx, OpKind::Send, 0, len, -1});
    if (doorbell_) doorbell_->ring(peer);
    return 0;
}

int ShmTransport::post_recv(void *buf, size_t len, void *, OpContext *ctx) {
    ctx->posted = OpKind::Recv;
    if (down_) return -ESHUTDOWN;
    if (posted_.size() >= kMaxPosted) return -EAGAIN;
    posted_.push({buf, len, ctx});
    return 0;
}

// Done in the call (the peer takes no part); the next poll reports it. A
// range outside the peer's registration fails without touching its memory.
int ShmTransport::rma(int peer, void *local, size_t len, uint64_t remote, uint64_t key, OpKind kind,
                      OpContext *ctx) {
    ctx->posted = kind;
    if (down_) return -ESHUTDOWN;
    if (!cma_reaches(peer)) return -EINVAL;
    done_.push({ctx, kind, copy(peer, local, len, remote, key, kind), len, peer});
    return 0;
}

int ShmTransport::write_now(int peer, const void *local, size_t len, uint64_t remote_addr,
                            uint64_t key) {
    if (down_) return -ESHUTDOWN;
    if (!writes_now(peer)) return -ENOTSUP;
    return -copy(peer, const_cast<void *>(local), len, remote_addr, key, OpKind::Write);
}

// The copy itself: 0, or a positive errno.
int ShmTransport::copy(int peer, void *local, size_t len, uint64_t remote, uint64_t key,
                       OpKind kind) const {
    const unsigned access = kind == OpKind::Read ? kRemoteRead : kRemoteWrite;
    int err = EACCES;
    if (shm_registration_covers(*peers_[static_cast<size_t>(peer)].region, key, remote, len,
                                access))
        err = kind == OpKind::Read ? cma_->read(peer, local, len, remote)
                                   : cma_->write(peer, local, len, remote);
    if (err != 0)
        log_debug("shm: %s rank %d (%zu bytes at %#llx, key %llu) failed: %s",
                  kind == OpKind::Read ? "read from" : "write to", peer, len,
                  static_cast<unsigned long long>(remote), static_cast<unsigned long long>(key),
                  std::strerror(err));
    return err;
}

int ShmTransport::poll(TransportCompletion *out, int max) {
    int n = 0;
    while (n < max && !done_.empty()) {
        out[n++] = done_.pop();
    }
    if (!down_ && n < max) n += take_arrivals(out + n, max - n);
    return n;
}

int ShmTransport::take_arrivals(TransportCompletion *out, int max) {
    int n = 0;
    for (int i = 0; i < ranks_ && n < max && !posted_.empty(); ++i) {
        const int r = (next_peer_ + i) % ranks_;
        if (r != self_) n += take_from(r, out + n, max - n);
    }
    next_peer_ = (next_peer_ + 1) % ranks_;
    return n;
}

// The peer a packet came from is the ring's, whatever the packet says.
int ShmTransport::take_from(int peer, TransportCompletion *out, int max) {
    Peer &p = peers_[static_cast<size_t>(peer)];
    int n = 0;
    while (n < max && !posted_.empty()) {
        const Posted &rx = posted_.front();
        size_t len = 0;
        const RingReader::Status s = p.in.pop(rx.buf, rx.len, &len);
        if (s == RingReader::Status::Empty) break;
        if (s == RingReader::Status::Broken) {
            if (!p.broken)
                log_error("rank %d's ring to us is corrupt; no more is read from it", peer);
            p.broken = true;
            break;
        }
        // A packet longer than the buffer: its head is delivered, as an error.
        out[n++] = {rx.ctx, OpKind::Recv, len > rx.len ? EMSGSIZE : 0, std::min(len, rx.len), peer};
        posted_.pop();
    }
    return n;
}

bool ShmTransport::prepare_wait() {
    if (!doorbell_ || !done_.empty()) return false;
    if (!posted_.empty())
        for (Peer &p : peers_)
            if (!p.broken && p.in.maybe_ready()) return false;
    doorbell_->prepare_sleep();
    return true;
}

}  // namespace

std::unique_ptr<Transport> open_shm_transport(const TransportSettings &settings,
                                              std::string *error) {
    auto t = std::make_unique<ShmTransport>(settings);
    if (t->open(error) != 0) return nullptr;
    return t;
}

}  // namespace msg
