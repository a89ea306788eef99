// The RDMA read rendezvous: the RTS carries the send buffer's registered
// address and key; the receiver reads its accepted bytes in pieces and, once
// every read has completed, sends FIN (with the bytes it took), on which the
// send completes. No CTS: the receiver reads at once (restricted mode's gate
// adds the CTS and GO that give each side its turn).
#include "protocol/rdma_read.hpp"

namespace msg {

int RdmaReadProtocol::start_send(Request &r) {
    Transport &t = host_.transport();
    if (t.register_memory(r.sbuf, r.len, kLocal | kRemoteRead, &r.mr) != 0)
        return MSG_ERR_TRANSPORT;
    WireHeader h = rts_fields(r);
    h.flags = kFlagRdmaRead;
    h.offset = r.mr->remote_address(r.sbuf);
    h.key = r.mr->remote_key();
    host_.send_control(r.peer, h);
    return MSG_OK;
}

// The receiver reads without granting anything, so a CTS for a read is not
// the receiver's.
bool RdmaReadProtocol::take_cts(Request &, const WireHeader &) {
    return false;
}

// Never called: the sender of a read moves nothing, its receiver does.
void RdmaReadProtocol::send_data(Request &) {}

void RdmaReadProtocol::start_recv(Request &r) {
    if (r.accepted == 0) {
        finish_recv(r);
        return;
    }
    Transport &t = host_.transport();
    if (t.needs_local_registration() && t.register_memory(r.rbuf, r.accepted, kLocal, &r.mr) != 0) {
        host_.complete(r, MSG_ERR_TRANSPORT, 0);
        return;
    }
    host_.move_rma(r, *this);
}

void RdmaReadProtocol::piece_done(Request &r) {
    if (r.done == r.accepted)
        finish_recv(r);
    else
        host_.move_rma(r, *this);
}

void RdmaReadProtocol::finish_recv(Request &r) {
    WireHeader fin = packet_fields(PacketType::Fin);
    fin.send_id = r.remote_id;
    fin.len = r.accepted;
    const uint64_t id = r.id;
    host_.send_control(r.peer, fin);
    // A FIN that cannot be sent fails the peer, which completes r (r is gone).
    if (host_.find(id) == nullptr) return;
    host_.complete(r, recv_status(r), r.accepted);
}

// FIN tells the sender its buffer is free again, and how much was taken.
bool RdmaReadProtocol::on_fin(Request &r, const WireHeader &h) {
    if (!r.is_send || h.len > r.len) return false;
    r.accepted = h.len;
    host_.complete(r, MSG_OK, r.accepted);
    return true;
}

}  // namespace msg
