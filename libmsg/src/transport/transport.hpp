// The one internal interface every fabric implements: VIA-style two-sided
// send/receive into pre-posted buffers, one-sided RDMA read and write,
// registration and completion polling. The protocols in protocol/ are written only against it.
#pragma once

#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace msg {

// Per-operation context the transport hands back on completion. The first
// bytes belong to the transport (libfabric keeps its fi_context2 there).
enum class OpKind : uint8_t { Send, Recv, Read, Write };

struct OpContext {
    alignas(16) unsigned char transport_space[64];
    // What was posted with this context, kept by transports whose completions
    // do not say reliably (an error completion's flags or opcode may not).
    OpKind posted = OpKind::Send;
};

struct TransportCompletion {
    OpContext *context;
    OpKind kind;
    int error;      // 0, or a positive errno-style code
    size_t length;  // bytes received (Recv)
    // Recv: the rank the fabric says sent the packet (its source address or
    // the connection it came on), never what the packet claims; -1 when the
    // fabric cannot name a rank of the job, and the packet is then not trusted.
    int peer;
};

// A first-in first-out queue for a transport's own bookkeeping (receives
// posted, completions made in the call): a ring that grows when full and never
// shrinks, so that after the first few operations queueing allocates nothing
// (a deque allocates and frees a block every few operations).
template <typename T>
class FifoRing {
  public:
    bool empty() const { return count_ == 0; }
    size_t size() const { return count_; }
    void push(const T &v) {
        if (count_ == ring_.size()) grow();
        ring_[(head_ + count_) % ring_.size()] = v;
        ++count_;
    }
    const T &front() const { return ring_[head_]; }
    T pop() {
        const T v = ring_[head_];
        head_ = (head_ + 1) % ring_.size();
        --count_;
        return v;
    }
    void clear() { head_ = count_ = 0; }

  private:
    void grow() {
        std::vector<T> bigger(ring_.empty() ? 16 : 2 * ring_.size());
        for (size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
        ring_.swap(bigger);
        head_ = 0;
    }
    std::vector<T> ring_;
    size_t head_ = 0, count_ = 0;
};

// A registration. Destroying it deregisters.
class MemoryRegion {
  public:
    virtual ~MemoryRegion() = default;
    // Descriptor to pass with local buffers in this region (may be null).
    virtual void *desc() const = 0;
    // What a peer needs to address this region remotely.
    virtual uint64_t remote_key() const = 0;
    virtual uint64_t remote_address(const void *p) const = 0;
};

enum Access : unsigned { kLocal = 1, kRemoteRead = 2, kRemoteWrite = 4 };

class Transport {
  public:
    virtual ~Transport() = default;

    virtual std::string name() const = 0;
    // This endpoint's address, to be exchanged through the bootstrap.
    virtual std::vector<uint8_t> address() const = 0;
    // Makes every rank addressable; addresses[r] is rank r's address.
    virtual int connect(const std::vector<std::vector<uint8_t>> &addresses) = 0;

    // True when local buffers must be registered before send/recv/read.
    virtual bool needs_local_registration() const = 0;
    virtual bool supports_rdma_read() const = 0;
    // True when post_write works and a write that has completed is in the
    // peer's memory before any send posted after that completion is
    // delivered (the write protocol's FIN relies on it).
    virtual bool supports_rdma_write() const = 0;
    // Largest single send, read or write the transport accepts.
    virtual size_t max_transfer() const = 0;
    virtual size_t max_iov() const = 0;
    // How many receives may be posted at once.
    virtual size_t max_posted_receives() const = 0;

    virtual int register_memory(const void *addr, size_t len, unsigned access,
                                std::unique_ptr<MemoryRegion> *out) = 0;
    // Registrations made, and registrations served again from a cache.
    virtual uint64_t registrations_made() const = 0;
    virtual uint64_t registrations_reused() const { return 0; }

    // Post operations. Return 0, -EAGAIN when the queue is full (retry after
    // poll), or another negative errno.
    virtual int post_send(int peer, const struct iovec *iov, void **desc, size_t count,
                          OpContext *ctx) = 0;
    virtual int post_recv(void *buf, size_t len, void *desc, OpContext *ctx) = 0;
    virtual int post_read(int peer, void *local, size_t len, void *desc, uint64_t remote_addr,
                          uint64_t key, OpContext *ctx) = 0;
    virtual int post_write(int peer, const void *local, size_t len, void *desc,
                           uint64_t remote_addr, uint64_t key, OpContext *ctx) = 0;

    // True when write_now can copy into `peer`'s memory (both on this host, with
    // cross-memory copies).
    virtual bool writes_now(int /*peer*/) const { return false; }
    // Copies len bytes from local into the peer's memory registered for remote
    // writes under key, in the call: 0 once they are there, else a negative
    // errno and nothing written (-ENOTSUP where writes_now is false). Unlike
    // post_write it has no completion, so a send posted after it returns 0 is
    // delivered after the bytes are in place.
    virtual int write_now(int /*peer*/, const void * /*local*/, size_t /*len*/,
                          uint64_t /*remote_addr*/, uint64_t /*key*/) {
        return -ENOTSUP;
    }

    // Reaps up to max completions without blocking; returns how many.
    virtual int poll(TransportCompletion *out, int max) = 0;

    // Stops all data movement (closes the endpoint) so that buffers and
    // registrations can be released; the transport only answers
    // register/deregister afterwards.
    virtual void shutdown() = 0;

    // An fd that becomes readable when poll may have work, or -1 when the
    // transport cannot be waited on and must be polled.
    virtual int wait_fd() const = 0;
    // Called right before blocking on wait_fd; false: do not block (work is
    // pending). After it returns true the caller polls once more, then
    // blocks, then calls finish_wait.
    virtual bool prepare_wait() = 0;
    virtual void finish_wait() {}
    // True if the fd also rings for the progress of our own operations;
    // false if it rings only for peers' arrivals.
    virtual bool fd_covers_own_operations() const = 0;
    // Every peer has connected to us (each sent us its first packet).
    virtual void peers_connected() {}
};

// Puts back the default action of fatal and terminating signals whose
// handlers the PSM libraries under libfabric installed (they turn a crash or
// a kill into exit status 1 and a *.btr file). Returns how many.
int keep_default_crash_signals();

// What opening a transport takes from msg_config_t, resolved for the job.
struct TransportSettings {
    // ofi: the libfabric provider ("shm", "tcp;ofi_rxm", "verbs;ofi_rxm", ...).
    std::string provider{};
    // ofi on shm, and the shm transport: long messages may move by cross-memory copies.
    bool shm_cma = true;
    // The job: its ranks, whether they all run on this host, and the receive
    // buffers' size (the largest packet); the shm transport sizes its rings by them.
    int ranks = 0;
    bool one_host = true;
    size_t buffer_size = 0;
    // verbs: the bound on connecting every peer.
    int connect_timeout_ms = 10000;
    // verbs: the RDMA device and the IPv4 address to listen on; "": any.
    std::string verbs_device{}, verbs_addr{};
    // verbs: long messages' registrations kept for reuse (count, bytes).
    size_t mr_cache_entries = 64;
    size_t mr_cache_bytes = size_t{1} << 30;
};

// Opens a libfabric RDM endpoint on settings.provider. On failure returns
// null and fills *error with a readable reason.
std::unique_ptr<Transport> open_ofi_transport(const TransportSettings &settings,
                                              std::string *error);

// What libfabric offers here, for msg-info: the providers it lists (each once), whether libmsg
// could open one (reliable datagrams naming their source) and with which RMA directions, and
// libfabric's version ("1.17").
std::vector<std::string> ofi_provider_names();
struct OfiProviderSurvey {
    std::string name;
    bool usable = false;
    bool rma_read = false, rma_write = false;
    std::string opens_as;  // the provider libfabric gives for the name ("tcp": "tcp;ofi_rxm")
    std::string domain;
    std::string why;  // when not usable
};
OfiProviderSurvey survey_ofi_provider(const std::string &provider);
std::string ofi_version();

}  // namespace msg
