// The requesting side: a request's header (with small data inline) and its
// separate data go out, receives for the reply's header and data are posted
// on the request's own tags, and the last of those parts to finish posts the
// completion to the caller's CQ.
#include "client.hpp"

#include <cstring>

#include "wire.hpp"

namespace remoteio {

// libremoteio's tags are libmsg's reserved range, which only its flagged calls may use.
static_assert(kTagRequest == MSG_TAG_RESERVED_FIRST && RIO_TAG_FIRST == MSG_TAG_RESERVED_FIRST);

namespace {

int tag_of(uint32_t base, int offset) {
    return static_cast<int>(base) + offset;
}

}  // namespace

Client::~Client() {
    // A CQ with operations still bound (a request that outlived the finalize
    // timeout) cannot be freed safely; it then stays allocated, and so do the
    // requests whose buffers its operations name.
    if (part_cq_ != nullptr && msg_cq_destroy(part_cq_) != MSG_OK) part_cq_ = nullptr;
    for (auto &[id, out] : outgoing_) out.release();
}

int Client::open() {
    return msg_cq_create_callback(msg_, &Client::on_part, this, &part_cq_);
}

int Client::issue(const Request &req) {
    if (state_ != State::Open)
        return state_ == State::Finalized ? static_cast<int>(MSG_ERR_FINALIZED) : RIO_ERR_SHUTDOWN;
    if (req.rank < 0 || req.rank >= size_) return MSG_ERR_UNKNOWN_RANK;
    if (req.cq == nullptr || (req.data == nullptr && req.len > 0) ||
        (req.reply == nullptr && req.reply_capacity > 0))
        return MSG_ERR_INVALID_ARG;

    uint64_t block =
        next_tag_block_++ % ((kTagLastDynamic + 1 - kTagFirstDynamic) / kTagsPerRequest);
    auto tag_base = static_cast<uint32_t>(kTagFirstDynamic + block * kTagsPerRequest);
    std::unique_ptr<Outgoing> owned = prepare(req, tag_base);
    Outgoing *out = owned.get();
    {
        std::lock_guard<std::mutex> lk(mu_);
        out->id = next_id_++;
        outgoing_.emplace(out->id, std::move(owned));
    }
    ++stats_.requests_issued;

    // Sends first: a reply that beats our receives waits in libmsg as an
    // unexpected message, so the order costs nothing and a send refused at
    // once leaves no receive behind.
    ++out->pending;
    int rc =
        msg_isend_flags(msg_, req.rank, kTagRequest, out->request_msg.data(),
                        out->request_msg.size(), part_cq_, &out->send_part, MSG_FLAG_RESERVED_TAG);
    if (rc != MSG_OK) {
        --out->pending;
        forget(out);
        return rc;
    }
    start(out, req, tag_base);
    drop_pending(out);
    return MSG_OK;
}

// The request's messages: its header (and data, when small enough to ride
// inline), and room for the reply header (and data, when it rides inline).
std::unique_ptr<Outgoing> Client::prepare(const Request &req, uint32_t tag_base) const {
    auto out = std::make_unique<Outgoing>();
    out->rank = req.rank;
    out->command = req.command;
    out->is_write = req.command == kCmdWrite;
    out->write_len = out->is_write ? req.len : 0;
    out->reply_buf = static_cast<char *>(req.reply);
    out->reply_capacity = req.reply_capacity;
    out->cq = req.cq;
    out->cookie = req.cookie;

    RequestHeader h{};
    h.magic = kRequestMagic;
    h.version = kVersion;
    h.target = static_cast<uint8_t>(req.target);
    h.command = req.command;
    h.tag_base = tag_base;
    h.data_len = req.len;
    h.reply_capacity = req.reply_capacity;
    h.handle = req.handle;
    h.offset = req.offset;
    h.length = req.length;
    const bool data_inline = req.len <= inline_max_;
    const bool reply_direct = req.reply_capacity > inline_max_;
    h.flags =
        static_cast<uint8_t>((data_inline ? kDataInline : 0) | (reply_direct ? kReplyDirect : 0));
    out->request_msg.resize(sizeof h + (data_inline ? req.len : 0));
    std::memcpy(out->request_msg.data(), &h, sizeof h);
    if (data_inline && req.len > 0)
        std::memcpy(out->request_msg.data() + sizeof h, req.data, req.len);
    out->reply_msg.resize(sizeof(ReplyHeader) + (reply_direct ? 0 : req.reply_capacity));
    return out;
}

// After the header's send: the separate data's send, then the receives for
// the reply's data (straight into the caller's buffer) and header.
void Client::start(Outgoing *out, const Request &req, uint32_t tag_base) {
    int rc;
    if (req.len > inline_max_) {
        ++out->pending;
        rc = msg_isend_flags(msg_, req.rank, tag_of(tag_base, kRequestDataTag), req.data, req.len,
                             part_cq_, &out->send_part, MSG_FLAG_RESERVED_TAG);
        if (rc != MSG_OK) fail_part(out, rc);
    }
    if (req.reply_capacity > inline_max_ && out->error == 0) {
        ++out->pending;
        rc = msg_irecv_flags(msg_, req.rank, tag_of(tag_base, kReplyDataTag), req.reply,
                             req.reply_capacity, part_cq_, &out->data_part, MSG_FLAG_RESERVED_TAG);
        if (rc != MSG_OK) fail_part(out, rc);
    }
    if (out->error == 0) {
        ++out->pending;
        rc = msg_irecv_flags(msg_, req.rank, tag_of(tag_base, kReplyHeaderTag),
                             out->reply_msg.data(), out->reply_msg.size(), part_cq_,
                             &out->header_part, MSG_FLAG_RESERVED_TAG);
        if (rc != MSG_OK) fail_part(out, rc);
    }
}

// A request that never went out: no completion will come for it.
void Client::forget(Outgoing *out) {
    std::lock_guard<std::mutex> lk(mu_);
    outgoing_.erase(out->id);
    idle_cv_.notify_all();
}

bool Client::wait_idle(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lk(mu_);
    return idle_cv_.wait_for(lk, limit, [this] { return outgoing_.empty(); });
}

void Client::on_part(void *arg, const msg_completion_t *c) {
    auto *self = static_cast<Client *>(arg);
    auto *part = static_cast<Part *>(c->cookie);
    if (part == nullptr) return;
    auto *out = static_cast<Outgoing *>(part->owner);
    switch (part->kind) {
        case PartKind::ReplyHeader:
            self->on_reply_header(out, *c);
            break;
        case PartKind::ReplyData:
            if (c->status == MSG_OK) {
                out->delivered = c->bytes;
                self->drop_pending(out);
            } else {
                self->fail_part(out, c->status);
            }
            break;
        case PartKind::RequestSend:
            if (c->status == MSG_OK)
                self->drop_pending(out);
            else
                self->fail_part(out, c->status);
            break;
        default:  // the other CQs' kinds never come here
            break;
    }
}

void Client::on_reply_header(Outgoing *out, const msg_completion_t &c) {
    if (c.status != MSG_OK) {
        // A reply larger than announced is a protocol error, not truncation
        // of the user's data.
        fail_part(out, c.status == MSG_ERR_TRUNCATED ? MSG_ERR_PROTOCOL : c.status);
        return;
    }
    ReplyHeader h;
    const char *why = c.bytes >= sizeof h ? nullptr : "short";
    if (why == nullptr) {
        std::memcpy(&h, out->reply_msg.data(), sizeof h);
        why = check_reply(h, c.bytes);
        if (why == nullptr && h.sent_len > out->reply_capacity) why = "more than the buffer";
    }
    if (why != nullptr) {
        fail_part(out, MSG_ERR_PROTOCOL);
        return;
    }
    out->reply_status = h.status;
    out->reply_len = h.data_len;
    if (h.inline_data) {
        if (h.sent_len > 0)
            std::memcpy(out->reply_buf, out->reply_msg.data() + sizeof h, h.sent_len);
        out->delivered = h.sent_len;
    }
    drop_pending(out);
}

// A part that failed, or could not be issued (its pending count goes too).
void Client::fail_part(Outgoing *out, int status) {
    int expected = 0;
    out->error.compare_exchange_strong(expected, status);
    drop_pending(out);
}

void Client::drop_pending(Outgoing *out) {
    if (--out->pending == 0) complete(out);
}

void Client::complete(Outgoing *out) {
    msg_completion_t c{};
    c.op = RIO_OP_REPLY;
    c.source = out->rank;
    c.tag = static_cast<int>(out->command);
    c.cookie = out->cookie;
    if (out->error != 0) {
        c.status = out->error;
    } else {
        c.status = out->reply_status;
        c.bytes = out->delivered;
        if (c.status == RIO_OK && out->reply_len > out->reply_capacity)
            c.status = MSG_ERR_TRUNCATED;
        if (c.status == RIO_OK && out->is_write) c.bytes = out->write_len;
        ++stats_.replies_received;
    }
    msg_cq_t *cq = out->cq;
    {
        std::lock_guard<std::mutex> lk(mu_);
        outgoing_.erase(out->id);  // frees out
        idle_cv_.notify_all();
    }
    msg_cq_post(cq, &c);
}

void Client::fail_all(int status) {
    std::vector<Outgoing *> all;
    {
        std::lock_guard<std::mutex> lk(mu_);
        for (auto &[id, o] : outgoing_) all.push_back(o.get());
    }
    for (Outgoing *o : all) {
        int expected = 0;
        o->error.compare_exchange_strong(expected, status);
        // Its parts will never come back; complete it now.
        o->pending = 0;
        complete(o);
    }
}

}  // namespace remoteio
