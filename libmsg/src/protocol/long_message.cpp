// Long messages. Every protocol opens with a request to send (RTS) so nothing
// large is ever buffered unexpectedly:
//   send/recv:  RTS -> CTS(accepted) -> chunks through pre-posted buffers;
//   RDMA read:  RTS(address, key) -> receiver reads -> FIN;
//   RDMA write: RTS -> CTS(accepted, address, key) -> sender writes -> FIN
//               (the writes themselves are in rdma_write.cpp).
// Restricted mode (the paper's lock) lets one long send and one long receive
// move data at a time. A receive takes the receive slot before its CTS; a send
// takes the send slot when its CTS arrives (a restricted RDMA read receive
// then waits for the sender's GO before reading). So a slot is only ever held
// by a pair whose other side has committed too: a send slot by a send that
// has its CTS, whose receiver already holds its receive slot; a receive slot
// by a receive whose sender either moves data now or waits only for its own
// send slot, held by such a moving pair. Waits are one step deep and never
// form a cycle; RTS packets are never held back.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.hpp"
#include "protocol/engine.hpp"
#include "protocol/engine_types.hpp"

namespace msg {

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
    } else if (opts_.long_protocol == MSG_PROTOCOL_RDMA_WRITE &&
               transport_->supports_rdma_write()) {
        // Registered now, where the transport needs it, so that a buffer that
        // cannot be registered fails here rather than after a receiver has
        // committed its buffer to us.
        if (transport_->needs_local_registration() &&
            transport_->register_memory(r->sbuf, r->len, kLocal, &r->mr) != 0) {
            free_txop(op);
            return MSG_ERR_TRANSPORT;
        }
        r->write = true;
        op->hdr.flags = kFlagRdmaWrite;
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
    // Nothing to write (truncated to zero bytes): a plain CTS, as send/recv.
    r->write =
        (flags & kFlagRdmaWrite) != 0 && r->accepted > 0 && transport_->supports_rdma_write();
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
    if (r->write && !offer_write_target(r, &op->hdr)) r->write = false;
    r->cts = true;
    queue_packet(op);
    if (!r->rdma && !r->write && r->accepted == 0 && find(r->id, -1) != nullptr)
        finish_long_recv(r);
}

void Engine::on_cts(const WireHeader &h, int src) {
    Request *r = find(h.send_id, src);
    // Only a long send of ours to that very peer, once, for no more than its
    // bytes; an unrestricted RDMA read is never granted (the receiver reads
    // at once), so a CTS for one is not the receiver's.
    if (r == nullptr || !r->is_send || !r->is_long || r->cts || h.len > r->len ||
        (r->rdma && !opts_.restricted) ||
        ((h.flags & kFlagRdmaWrite) && !valid_write_target(r, h))) {
        ++stats_.bad_headers;
        return;
    }
    r->cts = true;
    r->remote_id = h.recv_id;
    r->accepted = h.len;
    // A write offer the receiver did not take (a plain CTS): chunks instead.
    r->write = (h.flags & kFlagRdmaWrite) != 0;
    if (r->write) {
        r->raddr = h.offset;
        r->rkey = h.key;
    }
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
    if (r->write) {
        post_rma(r);
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
    // Each chunk has exactly its place's length and lands once: a duplicate or a short chunk
    // would otherwise let `done` reach `accepted` with a hole in the buffer.
    if (r == nullptr || r->is_send || !r->is_long || r->rdma || r->write ||
        h.offset % chunk_payload() != 0 || h.offset >= r->accepted ||
        plen != std::min<uint64_t>(chunk_payload(), r->accepted - h.offset)) {
        ++stats_.bad_headers;
        return;
    }
    const auto chunk = static_cast<size_t>(h.offset / chunk_payload());
    if (r->chunk_seen.empty())
        r->chunk_seen.resize(
            static_cast<size_t>((r->accepted + chunk_payload() - 1) / chunk_payload()));
    if (r->chunk_seen[chunk]) {
        ++stats_.bad_headers;
        return;
    }
    r->chunk_seen[chunk] = true;
    std::memcpy(r->rbuf + h.offset, payload, plen);
    r->done += plen;
    if (r->done == r->accepted) finish_long_recv(r);
}

void Engine::on_go(const WireHeader &h, int src) {
    Request *r = find(h.recv_id, src);
    // GO answers the CTS of a restricted RDMA read receive, once: a second
    // one would start the reads again over those in flight.
    if (r == nullptr || r->is_send || !r->is_long || !r->rdma || r->remote_id != h.send_id ||
        !opts_.restricted || !r->cts || r->posted_bytes > 0 || r->outstanding > 0 || r->mr) {
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
    post_rma(r);
}

Engine::RmaOp *Engine::take_rma_op(uint64_t req_id, size_t len) {
    RmaOp *op;
    if (rma_free_.empty()) {
        rma_pool_.push_back(std::make_unique<RmaOp>());
        op = rma_pool_.back().get();
    } else {
        op = rma_free_.back();
        rma_free_.pop_back();
    }
    op->req_id = req_id;
    op->len = len;
    return op;
}

void Engine::give_rma_op(RmaOp *op) {
    rma_free_.push_back(op);
}

void Engine::post_rma(Request *r) {
    const bool write = r->is_send;
    const char *what = write ? "write to" : "read from";
    size_t piece = std::min(kRmaPiece, transport_->max_transfer());
    while (r->outstanding < kRmaInFlight && r->posted_bytes < r->accepted) {
        size_t n = std::min<uint64_t>(piece, r->accepted - r->posted_bytes);
        RmaOp *op = take_rma_op(r->id, n);
        void *desc = r->mr ? r->mr->desc() : nullptr;
        uint64_t remote = r->raddr + r->posted_bytes;
        int rc = write ? transport_->post_write(r->peer, r->sbuf + r->posted_bytes, n, desc, remote,
                                                r->rkey, &op->ctx)
                       : transport_->post_read(r->peer, r->rbuf + r->posted_bytes, n, desc, remote,
                                               r->rkey, &op->ctx);
        if (rc != 0) {
            give_rma_op(op);
            if (rc == -EAGAIN) {
                rma_waiting_.push_back(r->id);
                backlog_ = true;
            } else {
                log_debug("RDMA %s rank %d failed: %s", what, r->peer, std::strerror(-rc));
                fail_peer(r->peer);
            }
            return;
        }
        ++ops_in_flight_;
        r->posted_bytes += n;
        ++r->outstanding;
    }
}

Engine::Request *Engine::rma_done(RmaOp *op, int error) {
    --ops_in_flight_;
    uint64_t id = op->req_id;
    size_t len = op->len;
    give_rma_op(op);
    Request *r = find(id, -1);
    if (r == nullptr) return nullptr;
    if (error != 0) {
        if (error != ECANCELED) {
            log_debug("RDMA %s rank %d completed with error %d",
                      r->is_send ? "write to" : "read from", r->peer, error);
            fail_peer(r->peer);
        }
        return nullptr;
    }
    --r->outstanding;
    r->done += len;
    return r;
}

void Engine::handle_read_done(RmaOp *op, int error) {
    Request *r = rma_done(op, error);
    if (r == nullptr) return;
    if (r->done == r->accepted)
        finish_long_recv(r);
    else
        post_rma(r);
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
