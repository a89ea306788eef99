// The RDMA WRITE rendezvous: RTS -> CTS(accepted, address, key) -> the sender
// writes -> FIN. The receiver names its registered buffer in the CTS; the
// sender writes it in pieces and sends FIN once every write has completed,
// and the receive completes on FIN. The transport promises that a completed
// write is in the receiver's memory before a send posted afterwards arrives
// (delivery-complete writes, send-after-write order, or copies done in
// place), so FIN cannot overtake the data. A receiver that cannot register
// its buffer for remote writes answers with a plain CTS, and both sides then
// move the message in chunks (the fall-back protocol).
#include "protocol/rdma_write.hpp"

#include <cstdint>

#include "common/log.hpp"

namespace msg {

int RdmaWriteProtocol::start_send(Request &r) {
    // Registered now, where the transport needs it, so that a buffer that
    // cannot be registered fails here rather than after a receiver has
    // committed its buffer to us.
    Transport &t = host_.transport();
    if (t.needs_local_registration() && t.register_memory(r.sbuf, r.len, kLocal, &r.mr) != 0)
        return MSG_ERR_TRANSPORT;
    WireHeader h = rts_fields(r);
    h.flags = kFlagRdmaWrite;
    host_.send_control(r.peer, h);
    return MSG_OK;
}

bool RdmaWriteProtocol::take_cts(Request &r, const WireHeader &cts) {
    // A plain CTS: the receiver offers no write target, so chunks instead.
    if ((cts.flags & kFlagRdmaWrite) == 0) {
        r.chunked = true;
        return fallback_.take_cts(r, cts);
    }
    // The target must be a real range: something to write, at an address
    // that does not wrap. (A zero-byte acceptance comes as a plain CTS.
    // Address 0 is fine: without FI_MR_VIRT_ADDR addresses are offsets into
    // the registration.)
    if (cts.len == 0 || cts.offset > UINT64_MAX - cts.len) return false;
    r.raddr = cts.offset;
    r.rkey = cts.key;
    return true;
}

void RdmaWriteProtocol::send_data(Request &r) {
    if (r.chunked)
        fallback_.send_data(r);
    else
        host_.move_rma(r, *this);
}

void RdmaWriteProtocol::piece_done(Request &r) {
    if (r.done < r.accepted) {
        host_.move_rma(r, *this);
        return;
    }
    // Every write has completed: FIN may go, and the send buffer is ours again.
    WireHeader fin = packet_fields(PacketType::Fin);
    fin.flags = kFlagRdmaWrite;
    fin.send_id = r.id;
    fin.recv_id = r.remote_id;
    fin.len = r.accepted;
    const uint64_t id = r.id;
    host_.send_control(r.peer, fin);
    // A FIN that cannot be sent fails the peer, which completes r (r is gone).
    if (host_.find(id) == nullptr) return;
    host_.complete(r, MSG_OK, r.accepted);
}

void RdmaWriteProtocol::start_recv(Request &r) {
    Transport &t = host_.transport();
    if (t.register_memory(r.rbuf, r.accepted, kLocal | kRemoteWrite, &r.mr) != 0) {
        // Chunks need no registration of the receive buffer: a plain CTS
        // still moves the message.
        log_debug(
            "receive buffer of %llu bytes cannot be registered for remote writes; "
            "rank %d sends it in chunks",
            static_cast<unsigned long long>(r.accepted), r.peer);
        r.chunked = true;
        fallback_.start_recv(r);
        return;
    }
    WireHeader h = cts_fields(r);
    h.flags = kFlagRdmaWrite;
    h.offset = r.mr->remote_address(r.rbuf);
    h.key = r.mr->remote_key();
    r.cts = true;
    host_.send_control(r.peer, h);
}

bool RdmaWriteProtocol::on_chunk(Request &r, const WireHeader &h, const char *payload, size_t len) {
    return r.chunked && fallback_.on_chunk(r, h, payload, len);
}

// FIN: the sender's writes have all completed, so the bytes are here. Only
// for a receive whose CTS has gone out, naming its send and exactly the
// accepted bytes.
bool RdmaWriteProtocol::on_fin(Request &r, const WireHeader &h) {
    if (r.is_send || r.chunked || !r.cts || r.remote_id != h.send_id || h.len != r.accepted)
        return false;
    r.done = r.accepted;
    host_.complete(r, recv_status(r), r.accepted);
    return true;
}

}  // namespace msg
