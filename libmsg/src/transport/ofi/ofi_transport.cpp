// libfabric implementation of the transport interface: one RDM endpoint, an
// address vector holding every rank, one completion queue with a wait fd.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/log.hpp"
#include "transport/host/cma.hpp"
#include "transport/host/doorbell.hpp"
#include "transport/host/signal_unlink.hpp"
#include "transport/ofi/fabric_address.hpp"
#include "transport/ofi/fabric_library.hpp"
#include "transport/ofi/psm_signals.hpp"
#include "transport/ofi/shm_region.hpp"
#include "transport/transport.hpp"

namespace msg {
namespace {

static_assert(sizeof(fi_context2) <= sizeof(OpContext::transport_space));

// PSM's handlers are installed when libfabric is loaded, before any code of
// the program runs; libmsg's constructors run after those of the libraries it
// needs, so the program starts with the default actions back.
__attribute__((constructor)) void restore_crash_signals_at_load() {
    restore_psm_signal_defaults();
}

template <typename T>
void close_fid(T *p) {
    if (p != nullptr) fi_close(&p->fid);
}

// The loaded library, for code reached only once it has loaded: every
// fi_info and fabric object here came from it.
const FabricLibrary &fabric() {
    return *fabric_library(nullptr);
}

struct InfoDeleter {
    void operator()(fi_info *i) const { fabric().freeinfo(i); }
};

class OfiRegion final : public MemoryRegion {
  public:
    OfiRegion(fid_mr *mr, bool virt_addr, const void *base)
        : mr_(mr), virt_addr_(virt_addr), base_(static_cast<const char *>(base)) {}
    ~OfiRegion() override { fi_close(&mr_->fid); }
    OfiRegion(const OfiRegion &) = delete;
    OfiRegion &operator=(const OfiRegion &) = delete;

    void *desc() const override { return fi_mr_desc(mr_); }
    uint64_t remote_key() const override { return fi_mr_key(mr_); }
    uint64_t remote_address(const void *p) const override {
        // With FI_MR_VIRT_ADDR the peer names our virtual address; without it,
        // an offset into the region.
        if (virt_addr_) return reinterpret_cast<uint64_t>(p);
        return static_cast<uint64_t>(static_cast<const char *>(p) - base_);
    }

  private:
    fid_mr *mr_;
    bool virt_addr_;
    const char *base_;
};

class OfiTransport final : public Transport {
  public:
    ~OfiTransport() override {
        shutdown();
        close_fid(domain_);
        close_fid(fabric_);
    }
    void shutdown() override {
        // Endpoint first: it references the CQ and AV. Closing it removes the
        // region, if its name is still there.
        close_fid(ep_);
        if (!region_.empty()) forget_on_signal(region_);
        region_.clear();
        close_fid(av_);
        close_fid(cq_);
        ep_ = nullptr;
        av_ = nullptr;
        cq_ = nullptr;
        wait_fd_ = -1;
    }

    int open(const TransportSettings &settings, std::string *error);

    std::string name() const override { return name_; }
    std::vector<uint8_t> address() const override { return address_; }
    int connect(const std::vector<std::vector<uint8_t>> &addresses) override;
    bool needs_local_registration() const override { return local_mr_; }
    bool supports_rdma_read() const override { return rma_; }
    bool supports_rdma_write() const override { return rma_write_; }
    size_t max_transfer() const override { return max_msg_; }
    size_t max_iov() const override { return max_iov_; }
    size_t max_posted_receives() const override { return rx_size_; }
    int register_memory(const void *addr, size_t len, unsigned access,
                        std::unique_ptr<MemoryRegion> *out) override;
    uint64_t registrations_made() const override { return registrations_; }
    int post_send(int peer, const struct iovec *iov, void **desc, size_t count,
                  OpContext *ctx) override;
    int post_recv(void *buf, size_t len, void *desc, OpContext *ctx) override;
    int post_read(int peer, void *local, size_t len, void *desc, uint64_t remote_addr, uint64_t key,
                  OpContext *ctx) override;
    bool writes_now(int peer) const override { return cma_reaches(peer); }
    int write_now(int peer, const void *local, size_t len, uint64_t remote_addr,
                  uint64_t) override {
        if (!writes_now(peer)) return -ENOTSUP;
        return -cma_->write(peer, local, len, remote_addr);
    }
    int post_write(int peer, const void *local, size_t len, void *desc, uint64_t remote_addr,
                   uint64_t key, OpContext *ctx) override;
    int poll(TransportCompletion *out, int max) override;
    int wait_fd() const override { return doorbell_ ? doorbell_->fd() : wait_fd_; }
    bool prepare_wait() override {
        if (!done_.empty()) return false;
        if (doorbell_) {
            doorbell_->prepare_sleep();
            return true;
        }
        if (wait_fd_ < 0) return false;
        fid *f = &cq_->fid;
        return fi_trywait(fabric_, &f, 1) == FI_SUCCESS;
    }
    void finish_wait() override {
        if (doorbell_) doorbell_->woke();
    }
    bool fd_covers_own_operations() const override { return !doorbell_; }
    // Every peer has mapped our region and our doorbell's flag (each mapped
    // them before its first packet to us, and none opens them by name again):
    // the names can go, and the kernel frees the memory with the last mapping,
    // however this process and its peers end.
    void peers_connected() override {
        if (doorbell_) doorbell_->unlink_name();
        if (region_.empty()) return;
        shm_unlink(region_.c_str());
        forget_on_signal(region_);
        region_.clear();
    }

  private:
    static int to_errno(ssize_t rc) { return rc == -FI_EAGAIN ? -EAGAIN : static_cast<int>(rc); }
    int failed(const char *what, int code, std::string *error) const {
        *error =
            std::string(what) + " failed on provider " + name_ + ": " + fabric().strerror(-code);
        return code;
    }
    void take_attributes(const fi_info &info);
    // After fi_enable: our fabric name, the doorbell, cross-memory copies.
    int publish_address(bool shm_cma, std::string *error);
    // shm: names the endpoint's region before fi_enable creates it.
    int name_region(std::string *error);

    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    fid_av *av_ = nullptr;
    fid_cq *cq_ = nullptr;
    fid_ep *ep_ = nullptr;
    std::string name_;
    std::string region_;  // shm: our region's name in /dev/shm until peers have mapped it
    std::vector<uint8_t> address_;
    std::vector<fi_addr_t> peers_;
    std::unordered_map<fi_addr_t, int> rank_of_;  // a packet's source address -> its sender
    int sender(fi_addr_t source) const;
    bool local_mr_ = false;
    bool virt_addr_ = false;
    bool prov_key_ = false;
    bool rma_ = false;
    bool rma_write_ = false;
    // The provider keeps sends behind earlier writes (FI_ORDER_SAW); without
    // it each write asks for delivery-complete semantics instead.
    bool send_after_write_ = false;
    size_t max_msg_ = 0;
    size_t max_iov_ = 1;
    size_t rx_size_ = 0;
    uint32_t addr_format_ = FI_FORMAT_UNSPEC;  // how peers' fabric names are read
    size_t name_len_ = 0;                      // our own fabric name's length
    uint64_t next_key_ = 1;
    uint64_t registrations_ = 0;
    int wait_fd_ = -1;
    std::unique_ptr<Doorbell> doorbell_;  // when the CQ has no fd (shm)
    std::unique_ptr<CrossMemory> cma_;    // shm: reads and writes done here, not in the provider
    FifoRing<TransportCompletion> done_;  // completed by us, reported by poll
    int cma_done(OpContext *ctx, OpKind kind, int peer, size_t len, int err);
    // Reads from and writes to this peer are our own cross-memory copies.
    bool cma_reaches(int peer) const { return cma_ && cma_->usable(peer); }
};

// The providers fi_getinfo lists with no hints, for an error naming what exists.
std::string providers_here() {
    std::string out;
    for (const std::string &n : ofi_provider_names()) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
}

// The provider's richest offer: each protocol that needs a missing capability
// falls back to send/recv in the engine.
int find_provider(const std::string &provider, std::unique_ptr<fi_info, InfoDeleter> *out,
                  std::string *error) {
    const FabricLibrary *lib = fabric_library(error);
    if (lib == nullptr) return -ENOSYS;
    std::unique_ptr<fi_info, InfoDeleter> hints(lib->dupinfo(nullptr));
    if (!hints) return *error = "fi_dupinfo failed", -ENOMEM;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(provider.c_str());

    // From the most to the least a provider may offer. Only
    // send-after-send order is asked for: shm grants send-after-write too,
    // but then without FI_MR_VIRT_ADDR, which the cross-memory copies need.
    // What order the provider gives unasked is read from its answer.
    // FI_SOURCE is required: a received packet's sender is then the address
    // the fabric saw it come from, which a peer cannot forge, not the rank
    // its header claims. A provider without it is refused rather than used
    // with senders the engine could not check.
    constexpr uint64_t kRead = FI_RMA | FI_READ | FI_REMOTE_READ;
    constexpr uint64_t kWrite = FI_RMA | FI_WRITE | FI_REMOTE_WRITE;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    fi_info *raw = nullptr;
    int rc = -FI_ENODATA;
    const uint64_t attempts[] = {FI_MSG | kRead | kWrite, FI_MSG | kRead, FI_MSG};
    for (uint64_t caps : attempts) {
        hints->caps = caps | FI_SOURCE;
        rc = lib->getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints.get(), &raw);
        if (rc == 0) break;
    }
    if (rc != 0) {
        // shm refuses to start when /dev/shm is short, and fi_getinfo then
        // says only that no provider answered.
        *error = provider == "shm" ? shm_refusal() : std::string();
        if (error->empty())
            *error = "no libfabric provider '" + provider +
                     "' with reliable datagram endpoints that name a packet's source "
                     "(FI_SOURCE): " +
                     lib->strerror(-rc) + "; the providers libfabric has here: " + providers_here();
        return rc;
    }
    out->reset(raw);
    if ((raw->caps & FI_SOURCE) == 0) {
        *error = "libfabric provider '" + provider + "' cannot name a packet's source (FI_SOURCE)";
        return -FI_ENODATA;
    }
    return 0;
}

void OfiTransport::take_attributes(const fi_info &info) {
    name_ = info.fabric_attr->prov_name;
    addr_format_ = info.addr_format;
    // FI_RMA with no direction named means every direction.
    const uint64_t dirs = info.caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
    rma_ = (info.caps & FI_RMA) != 0 && (dirs == 0 || (dirs & FI_READ) != 0);
    rma_write_ = (info.caps & FI_RMA) != 0 && (dirs == 0 || (dirs & FI_WRITE) != 0);
    send_after_write_ = (info.tx_attr->msg_order & FI_ORDER_SAW) != 0;
    local_mr_ = (info.domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    virt_addr_ = (info.domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    prov_key_ = (info.domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
    max_msg_ = info.ep_attr->max_msg_size;
    max_iov_ = info.tx_attr->iov_limit == 0 ? 1 : info.tx_attr->iov_limit;
    rx_size_ = info.rx_attr->size;
}

int OfiTransport::open(const TransportSettings &settings, std::string *error) {
    std::unique_ptr<fi_info, InfoDeleter> info;
    int rc = find_provider(settings.provider, &info, error);
    if (rc != 0) return rc;
    take_attributes(*info);

    auto fail = [&](const char *what, int code) { return failed(what, code, error); };
    if ((rc = fabric().fabric(info->fabric_attr, &fabric_, nullptr))) return fail("fi_fabric", rc);
    if ((rc = fi_domain(fabric_, info.get(), &domain_, nullptr))) return fail("fi_domain", rc);

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.size = 0;
    cq_attr.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(domain_, &cq_attr, &cq_, nullptr) != 0) {
        // No fd to sleep on: the progress thread polls this transport instead.
        cq_attr.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr))) return fail("fi_cq_open", rc);
    } else if (fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
        wait_fd_ = -1;
    }

    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if ((rc = fi_av_open(domain_, &av_attr, &av_, nullptr))) return fail("fi_av_open", rc);
    if ((rc = fi_endpoint(domain_, info.get(), &ep_, nullptr))) return fail("fi_endpoint", rc);
    if ((rc = fi_ep_bind(ep_, &av_->fid, 0))) return fail("fi_ep_bind(av)", rc);
    if ((rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV))) return fail("fi_ep_bind(cq)", rc);
    if (name_ == "shm" && (rc = name_region(error))) return rc;
    if ((rc = fi_enable(ep_))) return fail("fi_enable", rc);
    // The provider leaves its region sparse: a page /dev/shm has no room for
    // would be a SIGBUS at its first touch, mid-job. Taken now, it is an error.
    if (!region_.empty() && (rc = reserve_shm_region(region_, error))) return rc;
    return publish_address(settings.shm_cma, error);
}

int OfiTransport::name_region(std::string *error) {
    // shm names its region after the pid by default; a region left in
    // /dev/shm by a killed process whose pid comes round again makes
    // fi_enable fail with EBUSY. A random name cannot collide. The pid in it
    // lets msgrun remove the regions of ranks that died.
    std::random_device rd;
    char region[64];
    std::snprintf(region, sizeof region, "viaduct-%d-%08x%08x", static_cast<int>(getpid()), rd(),
                  rd());
    if (int rc = fi_setname(&ep_->fid, region, std::strlen(region) + 1))
        return failed("fi_setname", rc, error);
    region_ = region;
    // The provider's own handlers remove it on SIGTERM and SIGINT only, and
    // only while the application has not replaced them.
    unlink_on_signal(region_);
    return 0;
}

int OfiTransport::publish_address(bool shm_cma, std::string *error) {
    size_t len = 0;
    fi_getname(&ep_->fid, nullptr, &len);
    std::vector<uint8_t> name(len);
    if (int rc = fi_getname(&ep_->fid, name.data(), &len)) return failed("fi_getname", rc, error);
    name.resize(len);
    if (wait_fd_ < 0) {
        auto bell = std::make_unique<Doorbell>();
        std::string why;
        if (bell->open(&why))
            doorbell_ = std::move(bell);
        else
            log_debug("no doorbell (%s): the progress thread will poll", why.c_str());
    }
    if (name_ == "shm" && (rma_ || rma_write_) && virt_addr_ && shm_cma)
        cma_ = std::make_unique<CrossMemory>();
    if (len == 0 || len > 0xffff) return failed("fi_getname (length)", -FI_EINVAL, error);
    name_len_ = len;
    address_ = pack_address(name, cma_ ? cma_->blob() : std::vector<uint8_t>{},
                            doorbell_ ? doorbell_->name() : std::vector<uint8_t>{});
    log_debug(
        "transport %s: wait fd %d, doorbell %d, rma read %d, rma write %d, send after write %d, "
        "virt addr %d, cross-memory copies %d, local mr %d, max msg %zu",
        name_.c_str(), wait_fd_, doorbell_ != nullptr, rma_, rma_write_, send_after_write_,
        virt_addr_, cma_ != nullptr, local_mr_, max_msg_);
    return 0;
}

int OfiTransport::connect(const std::vector<std::vector<uint8_t>> &addresses) {
    peers_.assign(addresses.size(), FI_ADDR_NOTAVAIL);
    rank_of_.clear();
    int self = -1;
    // Every address is checked before any reaches the address vector.
    std::vector<PeerAddress> parsed(addresses.size());
    for (size_t r = 0; r < addresses.size(); ++r) {
        const auto &a = addresses[r];
        if (const char *why =
                parse_address(a, addr_format_, name_len_, CrossMemory::kBlobSize, &parsed[r])) {
            log_error("rank %zu sent a malformed fabric address (%zu bytes, provider %s): %s", r,
                      a.size(), name_.c_str(), why);
            return -EINVAL;
        }
    }
    // Two ranks with one fabric address could not be told apart as senders
    // (the provider names one of them for both): refuse the job.
    for (size_t r = 0; r < addresses.size(); ++r)
        for (size_t q = 0; q < r; ++q)
            if (parsed[q].name == parsed[r].name) {
                log_error("ranks %zu and %zu sent the same fabric address", q, r);
                return -EINVAL;
            }
    for (size_t r = 0; r < addresses.size(); ++r) {
        if (addresses[r] == address_) self = static_cast<int>(r);
        int n = fi_av_insert(av_, parsed[r].name.data(), 1, &peers_[r], 0, nullptr);
        if (n != 1) {
            log_error("fi_av_insert for rank %zu failed", r);
            return -EINVAL;
        }
        rank_of_.emplace(peers_[r], static_cast<int>(r));
    }
    return connect_host_peers(doorbell_.get(), cma_.get(), parsed, self);
}

int OfiTransport::register_memory(const void *addr, size_t len, unsigned access,
                                  std::unique_ptr<MemoryRegion> *out) {
    uint64_t acc = FI_SEND | FI_RECV | FI_READ;
    if (rma_write_) acc |= FI_WRITE;
    if (access & kRemoteRead) acc |= FI_REMOTE_READ;
    if (access & kRemoteWrite) acc |= FI_REMOTE_WRITE;
    fid_mr *mr = nullptr;
    uint64_t key = prov_key_ ? 0 : next_key_++;
    // Zero-length registrations are not portable; register one byte instead.
    int rc = fi_mr_reg(domain_, addr, len == 0 ? 1 : len, acc, 0, key, 0, &mr, nullptr);
    if (rc != 0) {
        log_error("fi_mr_reg(%zu bytes) failed: %s", len, fabric().strerror(-rc));
        return rc;
    }
    ++registrations_;
    *out = std::make_unique<OfiRegion>(mr, virt_addr_, addr);
    return 0;
}

int OfiTransport::post_send(int peer, const struct iovec *iov, void **desc, size_t count,
                            OpContext *ctx) {
    ctx->posted = OpKind::Send;
    ssize_t rc = fi_sendv(ep_, iov, desc, count, peers_[static_cast<size_t>(peer)], ctx);
    if (rc != 0) return to_errno(rc);
    if (doorbell_) doorbell_->ring(peer);
    return 0;
}

int OfiTransport::post_recv(void *buf, size_t len, void *desc, OpContext *ctx) {
    ctx->posted = OpKind::Recv;
    ssize_t rc = fi_recv(ep_, buf, len, desc, FI_ADDR_UNSPEC, ctx);
    return rc == 0 ? 0 : to_errno(rc);
}

// A cross-memory read or write is done when the call returns (the peer need
// not take part); the next poll reports it.
int OfiTransport::cma_done(OpContext *ctx, OpKind kind, int peer, size_t len, int err) {
    if (err != 0)
        log_debug("cross-memory %s rank %d failed: %s",
                  kind == OpKind::Read ? "read from" : "write to", peer, strerror(err));
    done_.push({ctx, kind, err, len, peer});
    return 0;
}

int OfiTransport::post_read(int peer, void *local, size_t len, void *desc, uint64_t remote_addr,
                            uint64_t key, OpContext *ctx) {
    ctx->posted = OpKind::Read;
    if (cma_reaches(peer))
        return cma_done(ctx, OpKind::Read, peer, len, cma_->read(peer, local, len, remote_addr));
    ssize_t rc =
        fi_read(ep_, local, len, desc, peers_[static_cast<size_t>(peer)], remote_addr, key, ctx);
    if (rc != 0) return to_errno(rc);
    if (doorbell_) doorbell_->ring(peer);
    return 0;
}

int OfiTransport::post_write(int peer, const void *local, size_t len, void *desc,
                             uint64_t remote_addr, uint64_t key, OpContext *ctx) {
    ctx->posted = OpKind::Write;
    if (cma_reaches(peer))  // in the peer's memory before any later send
        return cma_done(ctx, OpKind::Write, peer, len, cma_->write(peer, local, len, remote_addr));
    fi_addr_t dest = peers_[static_cast<size_t>(peer)];
    ssize_t rc;
    if (send_after_write_) {
        rc = fi_write(ep_, local, len, desc, dest, remote_addr, key, ctx);
    } else {
        // No send-after-write order: the write completes only once its data
        // is in the peer's memory, so a send posted after it cannot overtake.
        iovec iov{const_cast<void *>(local), len};
        fi_rma_iov rma{remote_addr, len, key};
        fi_msg_rma msg{};
        msg.msg_iov = &iov;
        msg.desc = &desc;
        msg.iov_count = 1;
        msg.addr = dest;
        msg.rma_iov = &rma;
        msg.rma_iov_count = 1;
        msg.context = ctx;
        rc = fi_writemsg(ep_, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    }
    if (rc != 0) return to_errno(rc);
    if (doorbell_) doorbell_->ring(peer);
    return 0;
}

int OfiTransport::poll(TransportCompletion *out, int max) {
    if (!done_.empty() && max > 0) {
        int n = 0;
        while (n < max && !done_.empty()) {
            out[n++] = done_.pop();
        }
        return n;
    }
    fi_cq_msg_entry entries[32];
    fi_addr_t sources[32];
    if (max > 32) max = 32;
    ssize_t n = fi_cq_readfrom(cq_, entries, static_cast<size_t>(max), sources);
    if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) {
            out[i].context = static_cast<OpContext *>(entries[i].op_context);
            out[i].kind = out[i].context->posted;
            out[i].error = 0;
            out[i].length = entries[i].len;
            out[i].peer = out[i].kind == OpKind::Recv ? sender(sources[i]) : -1;
        }
        return static_cast<int>(n);
    }
    if (n == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        if (fi_cq_readerr(cq_, &err, 0) == 1) {
            if (err.op_context == nullptr) {
                log_debug("completion error with no operation: %s",
                          fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0));
                return 0;
            }
            out[0].context = static_cast<OpContext *>(err.op_context);
            // Providers do not always set an error entry's flags (shm leaves
            // FI_READ off a failed read): the kind comes from what was posted.
            out[0].kind = out[0].context->posted;
            out[0].error = err.err != 0 ? err.err : EIO;
            out[0].length = err.len;
            out[0].peer = -1;
            if (err.err != FI_ECANCELED)
                log_debug("completion error: %s",
                          fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0));
            return 1;
        }
        return 0;
    }
    return 0;
}

int OfiTransport::sender(fi_addr_t source) const {
    // FI_ADDR_NOTAVAIL (a source not in the address vector) is no rank either.
    auto it = rank_of_.find(source);
    return it == rank_of_.end() ? -1 : it->second;
}

}  // namespace

std::vector<std::string> ofi_provider_names() {
    const FabricLibrary *lib = fabric_library(nullptr);
    fi_info *all = nullptr;
    if (lib == nullptr || lib->getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, nullptr, &all) != 0 ||
        all == nullptr)
        return {};
    std::vector<std::string> names;
    for (const fi_info *i = all; i != nullptr; i = i->next)
        if (i->fabric_attr != nullptr && i->fabric_attr->prov_name != nullptr &&
            std::find(names.begin(), names.end(), i->fabric_attr->prov_name) == names.end())
            names.push_back(i->fabric_attr->prov_name);
    lib->freeinfo(all);
    return names;
}

OfiProviderSurvey survey_ofi_provider(const std::string &provider) {
    OfiProviderSurvey out;
    out.name = provider;
    std::unique_ptr<fi_info, InfoDeleter> info;
    if (find_provider(provider, &info, &out.why) != 0) return out;
    out.usable = true;
    const uint64_t dirs = info->caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
    out.rma_read = (info->caps & FI_RMA) != 0 && (dirs == 0 || (dirs & FI_READ) != 0);
    out.rma_write = (info->caps & FI_RMA) != 0 && (dirs == 0 || (dirs & FI_WRITE) != 0);
    out.opens_as = info->fabric_attr->prov_name != nullptr ? info->fabric_attr->prov_name : "";
    if (info->domain_attr != nullptr && info->domain_attr->name != nullptr)
        out.domain = info->domain_attr->name;
    return out;
}

std::string ofi_version() {
    std::string why;
    const FabricLibrary *lib = fabric_library(&why);
    if (lib == nullptr) return "absent (" + why + ")";
    const uint32_t v = lib->version();
    return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

int keep_default_crash_signals() {
    return restore_psm_signal_defaults();
}

std::unique_ptr<Transport> open_ofi_transport(const TransportSettings &settings,
                                              std::string *error) {
    auto t = std::make_unique<OfiTransport>();
    if (t->open(settings, error) != 0) return nullptr;
    return t;
}

}  // namespace msg
