// Native rdma-core transport: one reliable-connected queue pair per peer,
// all connected at start-up through the RDMA connection manager, receives
// pre-posted on one shared receive queue, one completion queue whose
// completion channel (with the connection manager's events) is the wait fd.
#pragma once

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <memory>
#include <string>
#include <vector>

#include "transport/transport.hpp"
#include "transport/verbs/registration_cache.hpp"

namespace msg {

// Opens the device that carries this host's RDMA-capable IPv4 address
// (settings.verbs_device / verbs_addr choose one) and listens on it.
// settings.connect_timeout_ms bounds connection setup. On failure returns
// null and fills *error with a readable reason.
std::unique_ptr<Transport> open_verbs_transport(const TransportSettings &settings,
                                                std::string *error);

class VerbsTransport final : public Transport {
  public:
    explicit VerbsTransport(const TransportSettings &settings)
        : connect_timeout_ms_(settings.connect_timeout_ms),
          want_device_(settings.verbs_device),
          want_addr_(settings.verbs_addr),
          mr_cache_entries_(settings.mr_cache_entries),
          mr_cache_bytes_(settings.mr_cache_bytes) {}
    ~VerbsTransport() override;
    VerbsTransport(const VerbsTransport &) = delete;
    VerbsTransport &operator=(const VerbsTransport &) = delete;

    int open(std::string *error);

    std::string name() const override { return "verbs-rc"; }
    std::vector<uint8_t> address() const override { return address_; }
    int connect(const std::vector<std::vector<uint8_t>> &addresses) override;
    bool needs_local_registration() const override { return true; }
    bool supports_rdma_read() const override { return true; }
    // RC delivers a send after the writes posted before it on the same queue
    // pair, and the engine waits for the writes' completions besides.
    bool supports_rdma_write() const override { return true; }
    size_t max_transfer() const override { return max_msg_; }
    size_t max_iov() const override { return max_sge_; }
    size_t max_posted_receives() const override { return srq_depth_; }
    uint64_t registrations_made() const override { return mrs_ ? mrs_->registrations() : 0; }
    uint64_t registrations_reused() const override { return mrs_ ? mrs_->hits() : 0; }
    int register_memory(const void *addr, size_t len, unsigned access,
                        std::unique_ptr<MemoryRegion> *out) override;
    int post_send(int peer, const struct iovec *iov, void **desc, size_t count,
                  OpContext *ctx) override;
    int post_recv(void *buf, size_t len, void *desc, OpContext *ctx) override;
    int post_read(int peer, void *local, size_t len, void *desc, uint64_t remote_addr, uint64_t key,
                  OpContext *ctx) override;
    int post_write(int peer, const void *local, size_t len, void *desc, uint64_t remote_addr,
                   uint64_t key, OpContext *ctx) override;
    int poll(TransportCompletion *out, int max) override;
    void shutdown() override;
    int wait_fd() const override { return epoll_fd_; }
    bool prepare_wait() override;
    void finish_wait() override { drain_cq_events(); }
    bool fd_covers_own_operations() const override { return true; }

  private:
    enum class PeerState { Idle, Resolving, Connecting, Connected, Lost };
    struct Peer {
        rdma_cm_id *id = nullptr;
        PeerState state = PeerState::Idle;
        size_t sq_used = 0;  // send-queue entries posted and not yet completed
        bool retry = false;  // we connect to it, and must (again)
    };
    struct CmEvent {
        rdma_cm_event_type type;
        rdma_cm_id *id;
        int status;
        std::vector<uint8_t> private_data;
    };

    // verbs_connect.cpp
    int open_listener(std::string *error);
    int start_active(int peer);
    int create_qp(rdma_cm_id *id);
    void close_peer(Peer &p);
    void handle_cm_event(const CmEvent &ev);
    void accept_connect_request(const CmEvent &ev);
    void on_established(int r, const CmEvent &ev);
    void drain_cm_events();
    rdma_conn_param conn_param(const void *private_data, uint8_t len) const;

    // verbs_transport.cpp
    int post_wr(int peer, ibv_send_wr *wr);
    int post_rdma(int peer, ibv_wr_opcode opcode, OpKind kind, const void *local, size_t len,
                  void *desc, uint64_t remote_addr, uint64_t key, OpContext *ctx);
    void drain_cq_events();
    void lose_peer(int peer, const char *why);
    // The rank whose queue pair has this number, or -1.
    int peer_of_qp(uint32_t qp_num) const;

    int connect_timeout_ms_;
    std::string want_device_, want_addr_;  // "": any
    size_t mr_cache_entries_, mr_cache_bytes_;
    rdma_event_channel *cm_channel_ = nullptr;
    rdma_cm_id *listener_ = nullptr;
    ibv_context *verbs_ = nullptr;  // the listener's device; every QP must be on it
    ibv_pd *pd_ = nullptr;
    ibv_comp_channel *comp_channel_ = nullptr;
    ibv_cq *cq_ = nullptr;
    ibv_srq *srq_ = nullptr;
    int epoll_fd_ = -1;
    unsigned cq_events_unacked_ = 0;
    std::unique_ptr<RegistrationCache> mrs_;

    sockaddr_in local_{};
    std::vector<uint8_t> address_;
    int self_ = -1;
    std::vector<Peer> peers_;
    std::vector<sockaddr_in> remote_;
    size_t sq_depth_ = 0, srq_depth_ = 0, max_sge_ = 2, max_msg_ = 0;
    uint8_t rd_atomic_ = 1;
    int max_cqe_ = 0;
    bool down_ = false;
};

}  // namespace msg
