// The RDMA WRITE rendezvous: RTS -> CTS(accepted, address, key) -> the sender
// writes -> FIN. The receiver names its registered buffer in the CTS; the
// sender writes it in pieces and sends FIN once every write has completed,
// and the receive completes on FIN. The transport promises that a completed
// write is in the receiver's memory before a send posted afterwards arrives
// (delivery-complete writes, send-after-write order, or copies done in
// place), so FIN cannot overtake the data.
#include <cstdint>

#include "common/log.hpp"
#include "protocol/engine.hpp"
#include "protocol/engine_types.hpp"

namespace msg {

bool Engine::offer_write_target(Request *r, WireHeader *cts) {
    if (transport_->register_memory(r->rbuf, r->accepted, kLocal | kRemoteWrite, &r->mr) != 0) {
        // Chunks need no registration of the receive buffer: a plain CTS
        // still moves the message.
        log_debug(
            "receive buffer of %llu bytes cannot be registered for remote writes; "
            "rank %d sends it in chunks",
            static_cast<unsigned long long>(r->accepted), r->peer);
        return false;
    }
    cts->flags = kFlagRdmaWrite;
    cts->offset = r->mr->remote_address(r->rbuf);
    cts->key = r->mr->remote_key();
    return true;
}

bool Engine::valid_write_target(const Request *r, const WireHeader &cts) const {
    // Only a send that offered to write takes a write target, and the target
    // must be a real range: something to write, at an address that does not
    // wrap. (A zero-byte acceptance comes as a plain CTS. Address 0 is fine:
    // without FI_MR_VIRT_ADDR addresses are offsets into the registration.)
    return r->write && !r->rdma && cts.len > 0 && cts.offset <= UINT64_MAX - cts.len;
}

void Engine::handle_write_done(RmaOp *op, int error) {
    Request *r = rma_done(op, error);
    if (r == nullptr) return;
    if (r->done < r->accepted) {
        post_rma(r);
        return;
    }
    // Every write has completed: FIN may go, and the send buffer is ours again.
    TxOp *fin = new_txop(r->peer, PacketType::Fin);
    fin->hdr.flags = kFlagRdmaWrite;
    fin->hdr.send_id = r->id;
    fin->hdr.recv_id = r->remote_id;
    fin->hdr.len = r->accepted;
    queue_packet(fin);
    finish_long_send(r);
}

void Engine::on_write_fin(const WireHeader &h, int src) {
    Request *r = find(h.recv_id, src);
    if (r == nullptr || r->is_send || !r->is_long || !r->write || !r->cts ||
        r->remote_id != h.send_id || h.len != r->accepted) {
        ++stats_.bad_headers;
        return;
    }
    r->done = r->accepted;
    finish_long_recv(r);
}

}  // namespace msg
