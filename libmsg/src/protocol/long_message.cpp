// Long messages. Both protocols open with a request to send (RTS) so nothing
// large is ever buffered unexpectedly:
//   send/recv: RTS -> CTS(accepted) -> chunks through pre-posted buffers;
//   RDMA:      RTS(address, key) -> receiver reads -> FIN.
// Restricted mode (the paper's lock) lets one long send and one long receive
// move data at a time; a restricted RDMA receive asks (CTS) and waits for the
// sender's turn (GO) before reading.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "protocol/engine.hpp"
#include "protocol/engine_types.hpp"

namespace msg {

namespace {
constexpr int kReadsInFlight = 4;
constexpr size_t kReadPiece = 32u << 20;
}  // namespace

int Engine::start_long_send(Request *r) {
    r->is_long = true;
    TxOp *op = new_txop(r->peer, PacketType::Rts);
    op->hdr.tag = r->tag;
    op->hdr.len = r->len;
    op->hdr.send_id = r->id;
    if (opts_.long_protocol == MSG_PROTOCOL_RDMA && transport_->supports_rdma_read()) {
        if (transport_->register_memory(r->sbuf, r->len, kLocal | kRemoteRead, &r->mr) != 0) {
            free_txop(op);
            return MSG_ERR_TRANSPORT;
        }
        r->rdma = true;
        op->hdr.flags = kFlagRdma;
        op->hdr.offset = r->mr->remote_address(r->sbuf);
        op->hdr.key = r->mr->remote_key();
    }
    queue_packet(op);
    return MSG_OK;
}

void Engine::start_long_recv(Request *r, int src, int tag, uint64_t len, uint64_t send_id,
                             uint32_t flags, uint64_t addr, uint64_t key) {
    if (r->in_posted) {
        posted_.erase(r->posted_it);
        r->in_posted = false;
    }
    r->is_long = true;
    r->peer = src;
    r->tag = tag;
    r->msg_len = len;
    r->accepted = std::min<uint64_t>(len, r->len);
    r->remote_id = send_id;
    r->rdma = (flags & kFlagRdma) != 0;
    r->raddr = addr;
    r->rkey = key;
    if (r->rdma && !opts_.restricted) {
        begin_reads(r);
    } else if (opts_.restricted && recv_slot_busy_) {
        recv_waiting_.push_back(r->id);
    } else {
        grant_recv(r);
    }
}

void Engine::grant_recv(Request *r) {
    if (opts_.restricted) {
        recv_slot_busy_ = true;
        r->holds_slot = true;
    }
    TxOp *op = new_txop(r->peer, PacketType::Cts);
    op->hdr.send_id = r->remote_id;
    op->hdr.recv_id = r->id;
    op->hdr.len = r->accepted;
    queue_packet(op);
    if (!r->rdma && r->accepted == 0 && find(r->id, -1) != nullptr) finish_long_recv(r);
}

void Engine::on_cts(const WireHeader &h, int src) {
    Request *r = find(h.send_id, src);
    if (r == nullptr || !r->is_send || !r->is_long || h.len > r->len) {
        ++stats_.bad_headers;
        return;
    }
    r->remote_id = h.recv_id;
    r->accepted = h.len;
    if (opts_.restricted && send_slot_busy_)
        send_waiting_.push_back(r->id);
    else
        start_send_data(r);
}

void Engine::start_send_data(Request *r) {
    if (opts_.restricted) {
        send_slot_busy_ = true;
        r->holds_slot = true;
    }
    if (r->rdma) {
        TxOp *op = new_txop(r->peer, PacketType::Go);
        op->hdr.send_id = r->id;
        op->hdr.recv_id = r->remote_id;
        queue_packet(op);
        return;
    }
    if (r->accepted == 0) {
        finish_long_send(r);
        return;
    }
    Peer &p = peers_[static_cast<size_t>(r->peer)];
    p.queue.push_back(OutItem{nullptr, r->id});
    flush(r->peer);
}

Engine::PostResult Engine::emit_chunk(Request *r) {
    void *desc = nullptr;
    if (payload_desc(r, r->sbuf, r->len, &desc) != MSG_OK) return PostResult::Failed;
    size_t n = std::min<uint64_t>(chunk_payload(), r->accepted - r->posted_bytes);
    TxOp *op = new_txop(r->peer, PacketType::Chunk);
    op->hdr.send_id = r->id;
    op->hdr.recv_id = r->remote_id;
    op->hdr.offset = r->posted_bytes;
    op->hdr.len = n;
    op->req_id = r->id;
    op->payload = n;
    op->payload_ptr = r->sbuf + r->posted_bytes;
    op->payload_desc = desc;
    PostResult pr = post_packet(op, true);
    if (pr != PostResult::Posted) {
        free_txop(op);
        return pr;
    }
    r->posted_bytes += n;
    ++r->outstanding;
    return pr;
}

void Engine::on_chunk(const WireHeader &h, int src, const char *payload, size_t plen) {
    Request *r = find(h.recv_id, src);
    // Chunks are sent in order, but a provider may complete a large one
    // after a smaller one behind it (libfabric promises no completion
    // order), so each lands at its own offset.
    if (r == nullptr || r->is_send || !r->is_long || r->rdma || h.offset % chunk_payload() != 0 ||
        h.offset >= r->accepted || plen > r->accepted - h.offset || r->done + plen > r->accepted) {
        ++stats_.bad_headers;
        return;
    }
    std::memcpy(r->rbuf + h.offset, payload, plen);
    r->done += plen;
    if (r->done == r->accepted) finish_long_recv(r);
}

void Engine::on_go(const WireHeader &h, int src) {
    Request *r = find(h.recv_id, src);
    if (r == nullptr || r->is_send || !r->is_long || !r->rdma || r->remote_id != h.send_id) {
        ++stats_.bad_headers;
        return;
    }
    begin_reads(r);
}

void Engine::begin_reads(Request *r) {
    if (r->accepted == 0) {
        finish_long_recv(r);
        return;
    }
    if (transport_->needs_local_registration() &&
        transport_->register_memory(r->rbuf, r->accepted, kLocal, &r->mr) != 0) {
        complete(r, MSG_ERR_TRANSPORT, 0);
        return;
    }
    post_reads(r);
}

void Engine::post_reads(Request *r) {
    size_t piece = std::min(kReadPiece, transport_->max_transfer());
    while (r->outstanding < kReadsInFlight && r->posted_bytes < r->accepted) {
        size_t n = std::min<uint64_t>(piece, r->accepted - r->posted_bytes);
        ReadOp *op;
        if (read_free_.empty()) {
            read_pool_.push_back(std::make_unique<ReadOp>());
            op = read_pool_.back().get();
        } else {
            op = read_free_.back();
            read_free_.pop_back();
        }
        op->req_id = r->id;
        op->len = n;
        int rc = transport_->post_read(r->peer, r->rbuf + r->posted_bytes, n,
                                       r->mr ? r->mr->desc() : nullptr, r->raddr + r->posted_bytes,
                                       r->rkey, &op->ctx);
        if (rc != 0) {
            read_free_.push_back(op);
            if (rc == -EAGAIN) {
                reads_waiting_.push_back(r->id);
                backlog_ = true;
            } else {
                log_debug("RDMA read from rank %d failed: %s", r->peer, std::strerror(-rc));
                fail_peer(r->peer);
            }
            return;
        }
        ++ops_in_flight_;
        r->posted_bytes += n;
        ++r->outstanding;
    }
}

void Engine::handle_read_done(ReadOp *op, int error) {
    --ops_in_flight_;
    uint64_t id = op->req_id;
    size_t len = op->len;
    read_free_.push_back(op);
    Request *r = find(id, -1);
    if (r == nullptr) return;
    if (error != 0) {
        if (error != ECANCELED) {
            log_debug("RDMA read from rank %d completed with error %d", r->peer, error);
            fail_peer(r->peer);
        }
        return;
    }
    --r->outstanding;
    r->done += len;
    if (r->done == r->accepted)
        finish_long_recv(r);
    else
        post_reads(r);
}

void Engine::finish_long_recv(Request *r) {
    if (r->rdma) {
        TxOp *op = new_txop(r->peer, PacketType::Fin);
        op->hdr.send_id = r->remote_id;
        op->hdr.len = r->accepted;
        queue_packet(op);
    }
    complete(r, r->msg_len > r->len ? MSG_ERR_TRUNCATED : MSG_OK, r->accepted);
}

void Engine::on_fin(const WireHeader &h, int src) {
    Request *r = find(h.send_id, src);
    if (r == nullptr || !r->is_send || !r->is_long || !r->rdma || h.len > r->len) {
        ++stats_.bad_headers;
        return;
    }
    r->accepted = h.len;
    finish_long_send(r);
}

void Engine::finish_long_send(Request *r) {
    complete(r, MSG_OK, r->accepted);
}

void Engine::release_send_slot() {
    send_slot_busy_ = false;
    while (!send_waiting_.empty() && !send_slot_busy_) {
        uint64_t id = send_waiting_.front();
        send_waiting_.pop_front();
        if (Request *r = find(id, -1)) start_send_data(r);
    }
}

void Engine::release_recv_slot() {
    recv_slot_busy_ = false;
    while (!recv_waiting_.empty() && !recv_slot_busy_) {
        uint64_t id = recv_waiting_.front();
        recv_waiting_.pop_front();
        if (Request *r = find(id, -1)) grant_recv(r);
    }
}

}  // namespace msg
