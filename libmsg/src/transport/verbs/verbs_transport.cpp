// Verbs transport data path: sends, receives on the shared receive queue,
// RDMA reads and writes, completions, blocking through the completion channel, and a
// lost peer's queue pair moved to the error state so nothing waits on it.
#include "transport/verbs/verbs_transport.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/log.hpp"

namespace msg {
namespace {

// Kept in the operation's context: a failed completion's opcode is undefined.
struct Stash {
    OpKind kind;
    int32_t peer;
};
static_assert(sizeof(Stash) <= sizeof(OpContext::transport_space));

void stash(OpContext *ctx, OpKind kind, int peer) {
    Stash s{kind, peer};
    std::memcpy(ctx->transport_space, &s, sizeof s);
}

Stash stashed(const OpContext *ctx) {
    Stash s;
    std::memcpy(&s, ctx->transport_space, sizeof s);
    return s;
}

int errno_of(ibv_wc_status s) {
    switch (s) {
        case IBV_WC_SUCCESS:
            return 0;
        case IBV_WC_WR_FLUSH_ERR:
            return ECONNRESET;  // the queue pair went to error
        case IBV_WC_RETRY_EXC_ERR:
        case IBV_WC_RNR_RETRY_EXC_ERR:
            return ETIMEDOUT;  // the peer stopped answering
        case IBV_WC_REM_ACCESS_ERR:
        case IBV_WC_LOC_PROT_ERR:
            return EACCES;
        case IBV_WC_LOC_LEN_ERR:
        case IBV_WC_REM_INV_REQ_ERR:
            return EMSGSIZE;
        default:
            return EIO;
    }
}

}  // namespace

std::unique_ptr<Transport> open_verbs_transport(const TransportSettings &settings,
                                                std::string *error) {
    auto t = std::make_unique<VerbsTransport>(settings);
    if (t->open(error) != 0) return nullptr;
    return t;
}

int VerbsTransport::register_memory(const void *addr, size_t len, unsigned access,
                                    std::unique_ptr<MemoryRegion> *out) {
    return mrs_->acquire(addr, len, access, out);
}

int VerbsTransport::post_wr(int peer, ibv_send_wr *wr) {
    if (peer < 0 || static_cast<size_t>(peer) >= peers_.size()) return -EINVAL;
    Peer &p = peers_[static_cast<size_t>(peer)];
    if (down_ || p.state != PeerState::Connected) return -ECONNRESET;
    if (p.sq_used >= sq_depth_) return -EAGAIN;
    ibv_send_wr *bad = nullptr;
    int rc = ibv_post_send(p.id->qp, wr, &bad);
    if (rc == ENOMEM) return -EAGAIN;
    if (rc != 0) return -rc;
    ++p.sq_used;
    return 0;
}

int VerbsTransport::post_send(int peer, const struct iovec *iov, void **desc, size_t count,
                              OpContext *ctx) {
    if (count > max_sge_) return -EINVAL;
    ibv_sge sge[4];
    int n = 0;
    for (size_t i = 0; i < count; ++i) {
        if (iov[i].iov_len == 0) continue;
        auto *mr = desc != nullptr ? static_cast<ibv_mr *>(desc[i]) : nullptr;
        if (mr == nullptr) return -EINVAL;  // every local buffer is registered
        sge[n++] = {reinterpret_cast<uint64_t>(iov[i].iov_base),
                    static_cast<uint32_t>(iov[i].iov_len), mr->lkey};
    }
    ibv_send_wr wr{};
    wr.wr_id = reinterpret_cast<uint64_t>(ctx);
    wr.sg_list = sge;
    wr.num_sge = n;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    stash(ctx, OpKind::Send, peer);
    return post_wr(peer, &wr);
}

int VerbsTransport::post_read(int peer, void *local, size_t len, void *desc, uint64_t remote_addr,
                              uint64_t key, OpContext *ctx) {
    return post_rdma(peer, IBV_WR_RDMA_READ, OpKind::Read, local, len, desc, remote_addr, key, ctx);
}

int VerbsTransport::post_write(int peer, const void *local, size_t len, void *desc,
                               uint64_t remote_addr, uint64_t key, OpContext *ctx) {
    return post_rdma(peer, IBV_WR_RDMA_WRITE, OpKind::Write, local, len, desc, remote_addr, key,
                     ctx);
}

int VerbsTransport::post_rdma(int peer, ibv_wr_opcode opcode, OpKind kind, const void *local,
                              size_t len, void *desc, uint64_t remote_addr, uint64_t key,
                              OpContext *ctx) {
    auto *mr = static_cast<ibv_mr *>(desc);
    // An rkey is 32 bits; a larger key cannot be one of ours.
    if (mr == nullptr || len > max_msg_ || key > UINT32_MAX) return -EINVAL;
    ibv_sge sge{reinterpret_cast<uint64_t>(local), static_cast<uint32_t>(len), mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = reinterpret_cast<uint64_t>(ctx);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = static_cast<uint32_t>(key);
    stash(ctx, kind, peer);
    return post_wr(peer, &wr);
}

int VerbsTransport::post_recv(void *buf, size_t len, void *desc, OpContext *ctx) {
    auto *mr = static_cast<ibv_mr *>(desc);
    if (mr == nullptr) return -EINVAL;
    if (down_ || srq_ == nullptr) return -ECANCELED;
    ibv_sge sge{reinterpret_cast<uint64_t>(buf), static_cast<uint32_t>(len), mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = reinterpret_cast<uint64_t>(ctx);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    stash(ctx, OpKind::Recv, -1);
    ibv_recv_wr *bad = nullptr;
    int rc = ibv_post_srq_recv(srq_, &wr, &bad);
    if (rc == ENOMEM) return -EAGAIN;
    return -rc;
}

int VerbsTransport::poll(TransportCompletion *out, int max) {
    if (cq_ == nullptr || down_) return 0;
    drain_cm_events();
    ibv_wc wc[32];
    int n = ibv_poll_cq(cq_, std::min(max, 32), wc);
    if (n < 0) {
        log_error("verbs: ibv_poll_cq failed");
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        auto *ctx = reinterpret_cast<OpContext *>(wc[i].wr_id);
        Stash s = stashed(ctx);
        out[i].context = ctx;
        out[i].kind = s.kind;
        out[i].error = errno_of(wc[i].status);
        out[i].length = wc[i].byte_len;
        out[i].peer = -1;
        if (s.kind == OpKind::Recv) {
            // One RC queue pair per peer: the one a receive completed on
            // names its sender, whatever the packet says.
            if (wc[i].status == IBV_WC_SUCCESS) out[i].peer = peer_of_qp(wc[i].qp_num);
            continue;
        }
        Peer &p = peers_[static_cast<size_t>(s.peer)];
        if (p.sq_used > 0) --p.sq_used;
        if (wc[i].status != IBV_WC_SUCCESS) lose_peer(s.peer, ibv_wc_status_str(wc[i].status));
    }
    return n;
}

int VerbsTransport::peer_of_qp(uint32_t qp_num) const {
    for (size_t r = 0; r < peers_.size(); ++r) {
        const Peer &p = peers_[r];
        if (p.id != nullptr && p.id->qp != nullptr && p.id->qp->qp_num == qp_num)
            return static_cast<int>(r);
    }
    return -1;
}

void VerbsTransport::lose_peer(int peer, const char *why) {
    if (peer < 0 || static_cast<size_t>(peer) >= peers_.size() || peer == self_) return;
    Peer &p = peers_[static_cast<size_t>(peer)];
    if (p.state == PeerState::Lost) return;
    bool was_up = p.state == PeerState::Connected;
    p.state = PeerState::Lost;
    if (was_up) log_debug("verbs: connection to rank %d lost: %s", peer, why);
    // Error state flushes every work request still queued, so each of them
    // completes (with an error) and no operation waits for a dead peer.
    if (p.id != nullptr && p.id->qp != nullptr) {
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_ERR;
        ibv_modify_qp(p.id->qp, &attr, IBV_QP_STATE);
        rdma_disconnect(p.id);
    }
}

bool VerbsTransport::prepare_wait() {
    if (cq_ == nullptr || down_) return false;
    drain_cq_events();
    // Armed before the caller's last poll: a completion after it rings the fd.
    return ibv_req_notify_cq(cq_, 0) == 0;
}

void VerbsTransport::drain_cq_events() {
    if (comp_channel_ == nullptr) return;
    ibv_cq *cq = nullptr;
    void *unused = nullptr;
    while (ibv_get_cq_event(comp_channel_, &cq, &unused) == 0) {
        if (++cq_events_unacked_ >= 64) {
            ibv_ack_cq_events(cq, cq_events_unacked_);
            cq_events_unacked_ = 0;
        }
    }
}

}  // namespace msg
