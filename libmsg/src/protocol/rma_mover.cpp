// RmaMover: the RDMA pieces of long messages in flight. The read and write
// protocols ask for their bytes to move; the engine hands back completions.
#include "protocol/rma_mover.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"

namespace msg {

// One read or write in flight; starts with the context the transport hands back.
struct RmaMover::Op {
    OpContext ctx;
    uint64_t req_id = 0;
    size_t len = 0;
    RmaClient *client = nullptr;
};

RmaMover::RmaMover(Transport *transport) : transport_(transport) {}

RmaMover::~RmaMover() = default;

PostResult RmaMover::post(Request &r, RmaClient &client) {
    const bool write = r.is_send;
    size_t piece = std::min(kRmaPiece, transport_->max_transfer());
    const uint64_t end = r.rma_until();
    while (r.outstanding < kRmaInFlight && r.posted_bytes < end) {
        size_t n = std::min<uint64_t>(piece, end - r.posted_bytes);
        if (free_.empty()) {
            pool_.push_back(std::make_unique<Op>());
            free_.push_back(pool_.back().get());
        }
        Op *op = free_.back();
        free_.pop_back();
        op->req_id = r.id;
        op->len = n;
        op->client = &client;
        void *desc = r.mr ? r.mr->desc() : nullptr;
        uint64_t remote = r.raddr + r.posted_bytes;
        int rc = write ? transport_->post_write(r.peer, r.sbuf + r.posted_bytes, n, desc, remote,
                                                r.rkey, &op->ctx)
                       : transport_->post_read(r.peer, r.rbuf + r.posted_bytes, n, desc, remote,
                                               r.rkey, &op->ctx);
        if (rc != 0) {
            free_.push_back(op);
            if (rc == -EAGAIN) {
                waiting_.emplace_back(r.id, &client);
                return PostResult::Again;
            }
            log_debug("RDMA %s rank %d failed: %s", write ? "write to" : "read from", r.peer,
                      std::strerror(-rc));
            return PostResult::Failed;
        }
        ++in_flight_;
        r.posted_bytes += n;
        ++r.outstanding;
    }
    return PostResult::Posted;
}

RmaMover::Piece RmaMover::finish(OpContext *ctx) {
    Op *op = reinterpret_cast<Op *>(ctx);
    --in_flight_;
    free_.push_back(op);
    return Piece{op->req_id, op->len, op->client};
}

std::deque<std::pair<uint64_t, RmaClient *>> RmaMover::take_waiting() {
    std::deque<std::pair<uint64_t, RmaClient *>> out;
    out.swap(waiting_);
    return out;
}

}  // namespace msg
