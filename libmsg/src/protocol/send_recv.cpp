// The send/recv protocol: RTS -> CTS(accepted) -> chunks of chunk_payload()
// bytes streamed under credit. The sender completes when its last chunk has
// been sent, the receiver when every chunk has landed.
#include "protocol/send_recv.hpp"

#include <algorithm>
#include <cstring>

namespace msg {

int SendRecvProtocol::start_send(Request &r) {
    host_.send_control(r.peer, rts_fields(r));
    return MSG_OK;
}

bool SendRecvProtocol::take_cts(Request &, const WireHeader &cts) {
    // A write target is for the RDMA write protocol's sends only.
    return (cts.flags & kFlagRdmaWrite) == 0;
}

void SendRecvProtocol::send_data(Request &r) {
    if (r.accepted == 0) {
        host_.complete(r, MSG_OK, r.accepted);
        return;
    }
    host_.send_stream(r, *this);
}

PostResult SendRecvProtocol::emit(Request &r) {
    void *desc = nullptr;
    if (host_.payload_desc(r, r.sbuf, r.len, &desc) != MSG_OK) return PostResult::Failed;
    size_t n = std::min<uint64_t>(host_.chunk_payload(), r.accepted - r.posted_bytes);
    WireHeader h = packet_fields(PacketType::Chunk);
    h.send_id = r.id;
    h.recv_id = r.remote_id;
    h.offset = r.posted_bytes;
    h.len = n;
    PostResult pr = host_.post_stream_packet(r, *this, h, r.sbuf + r.posted_bytes, n, desc);
    if (pr != PostResult::Posted) return pr;
    r.posted_bytes += n;
    ++r.outstanding;
    return pr;
}

void SendRecvProtocol::sent(Request &r, size_t payload) {
    --r.outstanding;
    r.done += payload;
    if (r.done == r.accepted) host_.complete(r, MSG_OK, r.accepted);
}

void SendRecvProtocol::start_recv(Request &r) {
    const uint64_t id = r.id;
    const bool empty = r.accepted == 0;
    r.cts = true;
    host_.send_control(r.peer, cts_fields(r));
    // Nothing will come for a receive truncated to zero bytes (unless sending
    // the CTS failed the peer, which has completed r already: r is gone).
    if (empty && host_.find(id) != nullptr) host_.complete(r, recv_status(r), 0);
}

bool SendRecvProtocol::on_chunk(Request &r, const WireHeader &h, const char *payload, size_t len) {
    // Chunks are sent in order, but a provider may complete a large one
    // after a smaller one behind it (libfabric promises no completion
    // order), so each lands at its own offset. Each chunk has exactly its
    // place's length and lands once: a duplicate or a short chunk would
    // otherwise let `done` reach `accepted` with a hole in the buffer.
    const size_t piece = host_.chunk_payload();
    if (h.offset % piece != 0 || h.offset >= r.accepted ||
        len != std::min<uint64_t>(piece, r.accepted - h.offset))
        return false;
    const auto chunk = static_cast<size_t>(h.offset / piece);
    if (r.chunk_seen.empty())
        r.chunk_seen.resize(static_cast<size_t>((r.accepted + piece - 1) / piece));
    if (r.chunk_seen[chunk]) return false;
    r.chunk_seen[chunk] = true;
    std::memcpy(r.rbuf + h.offset, payload, len);
    r.done += len;
    if (r.done == r.accepted) host_.complete(r, recv_status(r), r.accepted);
    return true;
}

}  // namespace msg
