// Replies of the requests this process serves: one message (header + data)
// when the requester takes the data inline, else the data straight into its
// buffer on the data tag, then the header. Their sends finish on the reply
// CQ, and the last one releases the request.
#include <cstring>

#include "server.hpp"

namespace remoteio {

int Server::send_reply(rio_incoming *in, int status, const void *data, size_t len, bool copy,
                       bool may_fall_back) {
    in->replied = true;
    if (status <= RIO_ERR_BAD_HANDLE) ++stats_.requests_refused;
    const size_t sent = len < in->hdr.reply_capacity ? len : in->hdr.reply_capacity;
    ReplyHeader h{};
    h.magic = kReplyMagic;
    h.version = kVersion;
    h.status = status;
    h.data_len = len;
    h.sent_len = sent;
    const bool direct = in->hdr.flags & kReplyDirect;
    h.inline_data = direct ? 0 : 1;
    in->reply_msg.resize(sizeof h + (direct ? 0 : sent));
    std::memcpy(in->reply_msg.data(), &h, sizeof h);
    if (!direct && sent > 0) std::memcpy(in->reply_msg.data() + sizeof h, data, sent);
    // A forwarded request is back in the shadow thread's hands until its
    // reply is sent.
    if (in->forwarded) ++in_shadow_hands_;

    in->sends = 1;  // held until both sends are issued
    if (direct) {
        int rc = send_reply_data(in, &h, status, data, copy, may_fall_back);
        if (rc != MSG_OK) return rc;  // nothing went out
    }
    ++in->sends;
    int rc = msg_isend_flags(msg_, in->source, static_cast<int>(in->hdr.tag_base) + kReplyHeaderTag,
                             in->reply_msg.data(), in->reply_msg.size(), reply_cq_, &in->send_part,
                             MSG_FLAG_RESERVED_TAG);
    if (rc != MSG_OK) --in->sends;
    // The issuing reference: if every send already finished (or none could be
    // issued), the request is done here.
    if (--in->sends == 0) release_incoming(in);
    return rc;
}

// The data on the request's data tag, straight into the requester's buffer.
// If it cannot go out: with may_fall_back nothing is sent and the error comes
// back; else the data tag, on which the requester waits, is closed with an
// empty message and the header (rewritten in reply_msg) says why nothing came.
int Server::send_reply_data(rio_incoming *in, ReplyHeader *h, int status, const void *data,
                            bool copy, bool may_fall_back) {
    const size_t sent = h->sent_len;
    const int tag = static_cast<int>(in->hdr.tag_base) + kReplyDataTag;
    const void *src = data;
    if (sent > 0 && copy && data != in->io_buf.data()) {
        in->reply_data.assign(static_cast<const char *>(data),
                              static_cast<const char *>(data) + sent);
        src = in->reply_data.data();
    }
    ++in->sends;
    int rc = msg_isend_flags(msg_, in->source, tag, src, sent, reply_cq_, &in->send_part,
                             MSG_FLAG_RESERVED_TAG);
    if (rc == MSG_OK) return MSG_OK;
    --in->sends;
    if (may_fall_back) {
        // The caller answers another way.
        in->replied = false;
        in->sends = 0;
        return rc;
    }
    h->status = status == RIO_OK ? rc : status;
    h->sent_len = 0;
    std::memcpy(in->reply_msg.data(), h, sizeof *h);
    ++in->sends;
    if (msg_isend_flags(msg_, in->source, tag, nullptr, 0, reply_cq_, &in->send_part,
                        MSG_FLAG_RESERVED_TAG) != MSG_OK)
        --in->sends;
    return MSG_OK;
}

// The reply CQ carries only the sends of replies; the last one of a request
// releases it. Under libmsg's lock: bookkeeping and CQ posts only.
void Server::on_reply_sent(void *arg, const msg_completion_t *c) {
    auto *part = static_cast<Part *>(c->cookie);
    if (part == nullptr || part->kind != PartKind::ReplySend) return;
    auto *in = static_cast<rio_incoming *>(part->owner);
    if (--in->sends == 0) static_cast<Server *>(arg)->release_incoming(in);
}

void Server::release_incoming(rio_incoming *in) {
    {
        std::lock_guard<std::mutex> lk(in_mu_);
        if (in->held != 0) {
            peer_held_[static_cast<size_t>(in->source)] -= in->held;
            stats_.request_data_held -= in->held;
        }
        serving_.erase(in);
    }
    // The last one out wakes a shadow thread that is winding down.
    if (--in_shadow_hands_ == 0 && stopping_) {
        static Part wake{PartKind::Wake, nullptr};
        msg_completion_t c{};
        c.op = MSG_OP_USER;
        c.cookie = &wake;
        msg_cq_post(shadow_cq_, &c);
    }
}

}  // namespace remoteio
