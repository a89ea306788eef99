// The RDMA read rendezvous: the RTS carries the send buffer's registered
// address and key; the receiver reads its accepted bytes in pieces and, once
// every read has completed, sends FIN (with the bytes it took), on which the
// send completes. No CTS: the receiver reads at once (restricted mode's gate
// adds the CTS and GO that give each side its turn).
//
// On one host the copy is shared (kFlagShare). A sender that can copy into
// its peer's memory in the call says so in the RTS. A receiver of at least
// kShareMin bytes then registers its buffer, names it in a CTS, and reads the
// first share_split bytes, while the sender, on that CTS, writes the rest and
// sends a FIN saying how much it wrote. Two cores copy instead of one. The
// receive completes, and its FIN goes, only when both parts are in: a sender
// whose write failed says it wrote nothing, and the receiver reads that part
// too. The send still completes on the receiver's FIN, after which neither
// side touches the other's buffer.
#include "protocol/rdma_read.hpp"

namespace msg {

int RdmaReadProtocol::start_send(Request &r) {
    Transport &t = host_.transport();
    if (t.register_memory(r.sbuf, r.len, kLocal | kRemoteRead, &r.mr) != 0)
        return MSG_ERR_TRANSPORT;
    WireHeader h = rts_fields(r);
    r.share = share_ && r.len >= kShareMin && t.writes_now(r.peer);
    h.flags = kFlagRdmaRead | (r.share ? kFlagShare : 0);
    h.offset = r.mr->remote_address(r.sbuf);
    h.key = r.mr->remote_key();
    host_.send_control(r.peer, h);
    return MSG_OK;
}

// The receiver reads without granting anything, so the only CTS a read takes
// is a shared copy's, for a send that offered one: where to write its part.
bool RdmaReadProtocol::take_cts(Request &r, const WireHeader &cts) {
    if (!r.share || cts.flags != kFlagShare || cts.len < kShareMin) return false;
    if (cts.offset > UINT64_MAX - cts.len) return false;
    r.raddr = cts.offset;
    r.rkey = cts.key;
    return true;
}

// A shared copy's CTS is taken: this side's part is written now, then FIN
// says how much of it (none if the write failed: the receiver reads it).
void RdmaReadProtocol::send_data(Request &r) {
    const uint64_t split = share_split(r.accepted);
    const uint64_t part = r.accepted - split;
    const int rc =
        host_.transport().write_now(r.peer, r.sbuf + split, part, r.raddr + split, r.rkey);
    WireHeader fin = packet_fields(PacketType::Fin);
    fin.flags = kFlagRdmaWrite | kFlagShare;
    fin.send_id = r.id;
    fin.recv_id = r.remote_id;
    fin.len = r.accepted;
    fin.offset = rc == 0 ? part : 0;
    host_.send_control(r.peer, fin);
}

void RdmaReadProtocol::start_recv(Request &r) {
    if (r.accepted == 0) {
        finish_recv(r);
        return;
    }
    if (start_shared_recv(r)) return;
    Transport &t = host_.transport();
    if (t.needs_local_registration() && t.register_memory(r.rbuf, r.accepted, kLocal, &r.mr) != 0) {
        host_.complete(r, MSG_ERR_TRANSPORT, 0);
        return;
    }
    host_.move_rma(r, *this);
}

// Shares the copy where the sender offered to and the buffer can take its
// writes: CTS, then this side's reads. False: read it all, as usual.
bool RdmaReadProtocol::start_shared_recv(Request &r) {
    if (!share_ || (r.offer_flags & kFlagShare) == 0 || r.accepted < kShareMin) return false;
    if (host_.transport().register_memory(r.rbuf, r.accepted, kLocal | kRemoteWrite, &r.mr) != 0)
        return false;
    r.share = true;
    r.rma_end = share_split(r.accepted);
    WireHeader h = cts_fields(r);
    h.flags = kFlagShare;
    h.offset = r.mr->remote_address(r.rbuf);
    h.key = r.mr->remote_key();
    r.cts = true;
    const uint64_t id = r.id;
    host_.send_control(r.peer, h);
    // A CTS that cannot be sent fails the peer, which completes r (r is gone).
    if (host_.find(id) == nullptr) return true;
    host_.move_rma(r, *this);
    return true;
}

void RdmaReadProtocol::piece_done(Request &r) {
    if (r.done < r.rma_until())
        host_.move_rma(r, *this);
    else if (!r.share || r.peer_wrote)
        finish_recv(r);
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

// FIN to a send: the receiver is done with its buffer, and took h.len bytes
// (exactly what its CTS accepted, where it sent one). FIN to a receive: the
// sender's part of a shared copy is done.
bool RdmaReadProtocol::on_fin(Request &r, const WireHeader &h) {
    if (!r.is_send) return on_shared_fin(r, h);
    if (h.flags != 0 || h.len > r.len || (r.cts && h.len != r.accepted)) return false;
    r.accepted = h.len;
    host_.complete(r, MSG_OK, r.accepted);
    return true;
}

bool RdmaReadProtocol::on_shared_fin(Request &r, const WireHeader &h) {
    const uint64_t split = share_split(r.accepted);
    if (!r.share || r.peer_wrote || h.flags != (kFlagRdmaWrite | kFlagShare) ||
        h.send_id != r.remote_id || h.len != r.accepted ||
        (h.offset != 0 && h.offset != r.accepted - split))
        return false;
    r.peer_wrote = true;
    if (h.offset == 0) {  // it could not write: this side reads its part as well
        r.rma_end = 0;
        if (r.outstanding == 0) host_.move_rma(r, *this);
        return true;
    }
    if (r.done == split) finish_recv(r);
    return true;
}

}  // namespace msg
