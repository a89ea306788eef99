// The send/recv protocol: RTS -> CTS(accepted) -> chunks of chunk_payload()
// bytes streamed under credit. The sender completes when its last chunk has
// been sent, the receiver when every chunk has landed.
//
// On one host a chunk need not pass through the receiver's pre-posted buffer
// and be copied out again: where the transport copies across processes
// (Transport::write_now), the receiver names its buffer in the CTS
// (kFlagInPlace), the sender copies each chunk straight to its place and sends
// a notice of it instead, in the same order and under the same credit. One
// copy of the data instead of three.
#include "protocol/send_recv.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace msg {

int SendRecvProtocol::start_send(Request &r) {
    host_.send_control(r.peer, rts_fields(r));
    return MSG_OK;
}

bool SendRecvProtocol::take_cts(Request &r, const WireHeader &cts) {
    // A write target is for the RDMA write protocol's sends only.
    if ((cts.flags & kFlagRdmaWrite) != 0) return false;
    if ((cts.flags & kFlagInPlace) == 0) return true;
    // A place offered: a real range, and a peer this transport can copy to
    // (else its chunks go through its buffers as usual).
    if (cts.len == 0 || cts.offset > UINT64_MAX - cts.len) return false;
    if (!host_.transport().writes_now(r.peer)) return true;
    r.in_place = true;
    r.raddr = cts.offset;
    r.rkey = cts.key;
    return true;
}

void SendRecvProtocol::send_data(Request &r) {
    if (r.accepted == 0) {
        host_.complete(r, MSG_OK, r.accepted);
        return;
    }
    host_.send_stream(r, *this);
}

PostResult SendRecvProtocol::emit(Request &r) {
    size_t n = std::min<uint64_t>(host_.chunk_payload(), r.accepted - r.posted_bytes);
    WireHeader h = packet_fields(PacketType::Chunk);
    h.send_id = r.id;
    h.recv_id = r.remote_id;
    h.offset = r.posted_bytes;
    h.len = n;
    PostResult pr;
    if (r.in_place) {
        // The chunk is in the receiver's buffer before its notice is posted.
        // (A notice the queue defers is posted again later: the copy is redone.)
        const int rc = host_.transport().write_now(r.peer, r.sbuf + r.posted_bytes, n,
                                                   r.raddr + r.posted_bytes, r.rkey);
        if (rc != 0) return PostResult::Failed;
        h.flags = kFlagInPlace;
        pr = host_.post_stream_packet(r, *this, h, nullptr, 0, nullptr);
    } else {
        void *desc = nullptr;
        if (host_.payload_desc(r, r.sbuf, r.len, &desc) != MSG_OK) return PostResult::Failed;
        pr = host_.post_stream_packet(r, *this, h, r.sbuf + r.posted_bytes, n, desc);
    }
    if (pr != PostResult::Posted) return pr;
    r.posted_bytes += n;
    ++r.outstanding;
    return pr;
}

void SendRecvProtocol::sent(Request &r, size_t bytes) {
    --r.outstanding;
    r.done += bytes;
    if (r.done == r.accepted) host_.complete(r, MSG_OK, r.accepted);
}

void SendRecvProtocol::start_recv(Request &r) {
    const uint64_t id = r.id;
    const bool empty = r.accepted == 0;
    WireHeader cts = cts_fields(r);
    Transport &t = host_.transport();
    // A place for the chunks, where the sender can copy to it; a buffer that
    // cannot be registered takes them through the pre-posted buffers instead.
    if (!empty && !r.chunked && t.writes_now(r.peer) &&
        t.register_memory(r.rbuf, r.accepted, kLocal | kRemoteWrite, &r.mr) == 0) {
        r.in_place = true;
        cts.flags = kFlagInPlace;
        cts.offset = r.mr->remote_address(r.rbuf);
        cts.key = r.mr->remote_key();
    }
    r.cts = true;
    host_.send_control(r.peer, cts);
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
    // A notice: only where a place was offered, and its bytes are already there.
    const bool notice = (h.flags & kFlagInPlace) != 0;
    if (notice && !r.in_place) return false;
    if (notice) len = h.len;
    if (h.offset % piece != 0 || h.offset >= r.accepted ||
        len != std::min<uint64_t>(piece, r.accepted - h.offset))
        return false;
    const auto chunk = static_cast<size_t>(h.offset / piece);
    if (r.chunk_seen.empty())
        r.chunk_seen.resize(static_cast<size_t>((r.accepted + piece - 1) / piece));
    if (r.chunk_seen[chunk]) return false;
    r.chunk_seen[chunk] = true;
    if (!notice) std::memcpy(r.rbuf + h.offset, payload, len);
    r.done += len;
    if (r.done == r.accepted) host_.complete(r, recv_status(r), r.accepted);
    return true;
}

}  // namespace msg
