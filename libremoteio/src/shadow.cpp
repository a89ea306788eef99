// The shadow thread: one dispatch loop over one CQ that receives every
// incoming request, forwards IPC to the worker thread, serves remote I/O
// itself with asynchronous file I/O, and finishes the requests this process
// issued as their replies arrive.
#include <algorithm>
#include <cstring>

#include "rio_impl.hpp"

using namespace remoteio;

using remoteio::Outgoing;
using remoteio::Part;
using remoteio::PartKind;
using remoteio::ReplyHeader;
using remoteio::RequestHeader;
using remoteio::RequestSlot;

void rio::shadow_thread() {
    for (;;) {
        int wait_ms = -1;
        if (stopping) {
            // Winding down: every rank has its replies, so no request is
            // coming and no awaited data is either. Withdraw every receive
            // not yet taking data (request headers, data that never came,
            // drains), finish what is in hand, and leave when all is back.
            size_t n = 0;
            msg_cq_cancel_recvs(shadow_cq, &n);
            if (in_shadow_hands == 0 && io_in_flight == 0 && io_waiting.empty() && slots_live == 0)
                break;
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                stop_deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                // What is still in hand (data still arriving, a stuck file
                // transfer) is abandoned; finalize reports the timeout.
                stop_status = RIO_ERR_TIMEOUT;
                break;
            }
            wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1000));
        }
        msg_completion_t c{};
        int rc = msg_cq_wait(shadow_cq, wait_ms, &c);
        if (rc == MSG_ERR_TIMEOUT && wait_ms >= 0) continue;
        if (rc != MSG_OK) {
            // The libmsg context is gone (finalized, or its fabric wedged):
            // nothing more can move; fail what we issued so nobody waits.
            stop_status = rc;
            fail_all_outgoing(rc);
            break;
        }
        handle(c);
        drain_file_io();
    }
}

// File transfers that finished during submit come back here, without the
// reaper's round trip through the CQ.
void rio::drain_file_io() {
    while (IoRequest *req = file_io->poll())
        on_io_done(static_cast<rio_incoming *>(req->part.owner));
}

void rio::handle(const msg_completion_t &c) {
    auto *part = static_cast<Part *>(c.cookie);
    if (part == nullptr) return;  // a receive that only drains refused data
    switch (part->kind) {
        case PartKind::RequestReceive:
            on_request_header(static_cast<RequestSlot *>(part->owner), c);
            break;
        case PartKind::RequestData: {
            auto *in = static_cast<rio_incoming *>(part->owner);
            if (c.status == MSG_OK && c.bytes == in->data.size()) {
                dispatch(in);
            } else {
                // The requester is gone or sent less than it announced.
                if (c.status == MSG_OK || c.status == MSG_ERR_TRUNCATED) ++bad_requests;
                release_incoming(in);
            }
            break;
        }
        case PartKind::ReplyHeader:
            on_reply_header(static_cast<Outgoing *>(part->owner), c);
            break;
        case PartKind::ReplyData: {
            auto *out = static_cast<Outgoing *>(part->owner);
            if (c.status == MSG_OK) {
                out->delivered = c.bytes;
                drop_pending(out);
            } else {
                fail_part(out, c.status);
            }
            break;
        }
        case PartKind::RequestSend: {
            auto *out = static_cast<Outgoing *>(part->owner);
            if (c.status == MSG_OK)
                drop_pending(out);
            else
                fail_part(out, c.status);
            break;
        }
        case PartKind::ReplySend: {
            auto *in = static_cast<rio_incoming *>(part->owner);
            if (--in->sends == 0) release_incoming(in);
            break;
        }
        case PartKind::FileIo:
            on_io_done(static_cast<rio_incoming *>(part->owner));
            break;
        case PartKind::Stop:
            stopping = true;
            break;
        case PartKind::Wake:
            break;
    }
}

// ---- incoming requests ----

void rio::post_request_slot(RequestSlot *slot) {
    if (stopping) {
        slot->retired = true;
        --slots_live;
        return;
    }
    if (msg_irecv(msg, MSG_ANY_SOURCE, kTagRequest, slot->buf.data(), slot->buf.size(), shadow_cq,
                  &slot->part) != MSG_OK) {
        slot->retired = true;
        --slots_live;
    }
}

void rio::on_request_header(RequestSlot *slot, const msg_completion_t &c) {
    if (c.status != MSG_OK) {
        // Canceled at shutdown, or the context is finishing; a receive too
        // small for what came is a malformed request.
        if (c.status == MSG_ERR_TRUNCATED) {
            ++bad_requests;
            post_request_slot(slot);
            return;
        }
        slot->retired = true;
        --slots_live;
        return;
    }
    RequestHeader h;
    const char *why = c.bytes >= sizeof h ? nullptr : "shorter than a request header";
    if (why == nullptr) {
        std::memcpy(&h, slot->buf.data(), sizeof h);
        why = check_request(h, c.bytes, inline_max);
    }
    if (why != nullptr) {
        ++bad_requests;
        post_request_slot(slot);
        return;
    }
    auto owned = std::make_unique<rio_incoming>();
    rio_incoming *in = owned.get();
    in->owner = this;
    in->source = c.source;
    in->hdr = h;
    const bool data_inline = (h.flags & kDataInline) != 0;
    int refuse = RIO_OK;
    if (!data_inline && h.data_len > opts.max_transfer)
        refuse = RIO_ERR_TOO_LARGE;
    else if (!hold_request_data(in, h.data_len))
        refuse = RIO_ERR_PEER_MEMORY;
    else if (data_inline)
        in->data.assign(slot->buf.data() + sizeof h, static_cast<size_t>(h.data_len));
    post_request_slot(slot);
    {
        std::lock_guard<std::mutex> lk(in_mu);
        serving.emplace(in, std::move(owned));
    }
    ++in_shadow_hands;

    if (refuse != RIO_OK) {
        if (!data_inline) drain_request_data(in);
        send_reply(in, refuse, nullptr, 0);
        return;
    }
    if (!data_inline) {
        if (stopping) {
            // Its data would only be withdrawn again.
            drain_request_data(in);
            send_reply(in, RIO_ERR_SHUTDOWN, nullptr, 0);
            return;
        }
        // Address space now; memory as the data arrives.
        if (!in->data.reserve(static_cast<size_t>(h.data_len))) {
            drain_request_data(in);
            send_reply(in, MSG_ERR_NO_MEMORY, nullptr, 0);
            return;
        }
        if (msg_irecv(msg, in->source, static_cast<int>(h.tag_base) + kRequestDataTag,
                      in->data.data(), in->data.size(), shadow_cq, &in->data_part) != MSG_OK)
            release_incoming(in);
        return;
    }
    dispatch(in);
}

bool rio::hold_request_data(rio_incoming *in, uint64_t bytes) {
    if (bytes == 0) return true;
    const size_t limit = opts.peer_memory;
    std::lock_guard<std::mutex> lk(in_mu);
    size_t &held = peer_held[static_cast<size_t>(in->source)];
    if (bytes > limit || held > limit - bytes) return false;
    held += static_cast<size_t>(bytes);
    in->held = static_cast<size_t>(bytes);
    request_data_held += bytes;
    return true;
}

void rio::drain_request_data(rio_incoming *in) {
    // libmsg truncates the data into nothing; the receive completes with a
    // null cookie, which the dispatch loop ignores.
    static char sink;
    msg_irecv(msg, in->source, static_cast<int>(in->hdr.tag_base) + kRequestDataTag, &sink, 0,
              shadow_cq, nullptr);
}

void rio::dispatch(rio_incoming *in) {
    if (stopping) {
        send_reply(in, RIO_ERR_SHUTDOWN, nullptr, 0);
        return;
    }
    uint32_t cmd = in->hdr.command;
    if (in->hdr.target == RIO_TARGET_WORKER) {
        if (cmd >= RIO_CMD_RESERVED) {
            send_reply(in, RIO_ERR_BAD_REQUEST, nullptr, 0);
        } else if (worker_cq == nullptr) {
            send_reply(in, RIO_ERR_NO_HANDLER, nullptr, 0);
        } else {
            // The worker replies when it is ready; until then the request is
            // in its hands, not ours.
            in->forwarded = true;
            --in_shadow_hands;
            ++requests_forwarded;
            msg_completion_t c{};
            c.op = RIO_OP_REQUEST;
            c.source = in->source;
            c.tag = static_cast<int>(cmd);
            c.bytes = in->data.size();
            c.cookie = in;
            msg_cq_post(worker_cq, &c);
        }
        return;
    }
    if (cmd == kCmdRead || cmd == kCmdWrite) {
        serve_io(in);
    } else if (cmd == kCmdStat) {
        serve_stat(in);
    } else {
        std::pair<rio_handler_fn, void *> h{nullptr, nullptr};
        {
            std::lock_guard<std::mutex> lk(handler_mu);
            auto it = handlers.find(cmd);
            if (it != handlers.end()) h = it->second;
        }
        if (h.first == nullptr) {
            send_reply(in, RIO_ERR_NO_HANDLER, nullptr, 0);
        } else {
            ++requests_served;
            h.first(this, in, h.second);
        }
    }
}

// ---- remote I/O ----

void rio::serve_stat(rio_incoming *in) {
    std::shared_ptr<Export> e;
    {
        std::lock_guard<std::mutex> lk(exp_mu);
        auto it = exports.find(in->hdr.handle);
        if (it != exports.end()) e = it->second;
    }
    if (!e) {
        send_reply(in, RIO_ERR_BAD_HANDLE, nullptr, 0);
        return;
    }
    ++requests_served;
    uint64_t reply[2] = {e->length, e->writable ? uint64_t{RIO_EXPORT_READ_WRITE} : 0};
    send_reply(in, RIO_OK, reply, sizeof reply);
}

void rio::serve_io(rio_incoming *in) {
    const RequestHeader &h = in->hdr;
    bool write = h.command == kCmdWrite;
    {
        std::lock_guard<std::mutex> lk(exp_mu);
        auto it = exports.find(h.handle);
        if (it != exports.end()) in->exp = it->second;
    }
    int refuse = RIO_OK;
    if (!in->exp)
        refuse = RIO_ERR_BAD_HANDLE;
    else if (h.offset > in->exp->length || h.length > in->exp->length - h.offset)
        refuse = RIO_ERR_RANGE;
    else if (write && !in->exp->writable)
        refuse = RIO_ERR_READ_ONLY;
    else if (h.length > opts.max_transfer)
        refuse = RIO_ERR_TOO_LARGE;
    else if (write ? h.length != in->data.size() : h.length > h.reply_capacity)
        refuse = RIO_ERR_BAD_REQUEST;
    if (refuse != RIO_OK) {
        send_reply(in, refuse, nullptr, 0);
        return;
    }
    if (h.length == 0) {
        ++requests_served;
        send_reply(in, RIO_OK, nullptr, 0);
        return;
    }
    if (!write) {
        // Already in the page cache: send it from there, the export (held by
        // the request) keeping the mapping alive until the send is done. A
        // transport that cannot register the mapping (verbs on a read-only
        // file mapping) leaves it to the file I/O path below.
        // (The request may be released as soon as its sends are issued: keep
        // what is needed afterwards.)
        const uint64_t length = h.length;
        const char *data =
            mapped_sends ? in->exp->resident(h.offset, static_cast<size_t>(length)) : nullptr;
        if (data != nullptr) {
            int rc = send_reply(in, RIO_OK, data, static_cast<size_t>(length), false, true);
            if (rc == MSG_OK) {
                ++requests_served;
                bytes_read += length;
                return;
            }
            // The transport cannot send from a file mapping: stop trying.
            if (rc == MSG_ERR_TRANSPORT) mapped_sends = false;
        }
    }
    io_waiting.push_back(in);
    start_waiting_io();
}

// Starts queued transfers while the depth and the memory budget allow (one
// transfer always may, however large, so nothing starves).
void rio::start_waiting_io() {
    while (!io_waiting.empty() && io_in_flight < opts.io_depth) {
        rio_incoming *in = io_waiting.front();
        size_t need = in->hdr.command == kCmdRead ? in->hdr.length : 0;
        if (io_in_flight > 0 && io_bytes_in_flight + need > opts.io_memory) break;
        io_waiting.pop_front();
        ++io_in_flight;
        io_bytes_in_flight += need;
        if (need > 0) {
            try {
                in->io_buf.resize(need);
            } catch (const std::bad_alloc &) {
                --io_in_flight;
                io_bytes_in_flight -= need;
                send_reply(in, MSG_ERR_NO_MEMORY, nullptr, 0);
                continue;
            }
        }
        submit_io(in);
    }
}

void rio::submit_io(rio_incoming *in) {
    bool write = in->hdr.command == kCmdWrite;
    remoteio::IoRequest &io = in->io;
    io.part = {PartKind::FileIo, in};
    io.fd = in->exp->fd;
    io.write = write;
    io.offset = in->exp->base + in->hdr.offset + in->io_done;
    io.buf = (write ? in->data.data() : in->io_buf.data()) + in->io_done;
    io.len = in->hdr.length - in->io_done;
    if (io.len > (size_t{1} << 30)) io.len = size_t{1} << 30;  // one transfer's limit
    file_io->submit(&io);
}

void rio::on_io_done(rio_incoming *in) {
    bool write = in->hdr.command == kCmdWrite;
    ssize_t res = in->io.result;
    // A read that hits the end of the file before the end of the export is
    // as much an error as EIO: the requester must not take it as data.
    if (res > 0) {
        in->io_done += static_cast<size_t>(res);
        if (in->io_done < in->hdr.length) {
            submit_io(in);
            return;
        }
    }
    --io_in_flight;
    io_bytes_in_flight -= write ? 0 : in->hdr.length;
    if (res <= 0) {
        send_reply(in, RIO_ERR_IO, nullptr, 0);
    } else {
        ++requests_served;
        if (write) {
            bytes_written += in->io_done;
            send_reply(in, RIO_OK, nullptr, 0);
        } else {
            bytes_read += in->io_done;
            send_reply(in, RIO_OK, in->io_buf.data(), in->io_done);
        }
    }
    start_waiting_io();
}

// ---- replies ----

// Sends the reply: one message (header + data) when the requester takes it
// inline, else the data straight into its buffer on the data tag, then the
// header. The incoming request is freed when the last send completes.
int rio::send_reply(rio_incoming *in, int status, const void *data, size_t len, bool copy,
                    bool may_fall_back) {
    in->replied = true;
    if (status <= RIO_ERR_BAD_HANDLE) ++requests_refused;
    size_t sent = len < in->hdr.reply_capacity ? len : in->hdr.reply_capacity;
    ReplyHeader h{};
    h.magic = kReplyMagic;
    h.version = kVersion;
    h.status = status;
    h.data_len = len;
    h.sent_len = sent;
    bool direct = in->hdr.flags & kReplyDirect;
    h.inline_data = direct ? 0 : 1;
    in->reply_msg.resize(sizeof h + (direct ? 0 : sent));
    std::memcpy(in->reply_msg.data(), &h, sizeof h);
    if (!direct && sent > 0) std::memcpy(in->reply_msg.data() + sizeof h, data, sent);
    // A forwarded request is back in the shadow thread's hands until its
    // reply is sent.
    if (in->forwarded) ++in_shadow_hands;

    int base = static_cast<int>(in->hdr.tag_base);
    in->sends = 1;  // held until both sends are issued
    int rc = MSG_OK;
    if (direct) {
        const void *src = data;
        if (sent > 0 && copy && data != in->io_buf.data()) {
            in->reply_data.assign(static_cast<const char *>(data),
                                  static_cast<const char *>(data) + sent);
            src = in->reply_data.data();
        }
        ++in->sends;
        rc = msg_isend(msg, in->source, base + kReplyDataTag, src, sent, part_cq, &in->send_part);
        if (rc != MSG_OK) {
            --in->sends;
            if (may_fall_back) {
                // Nothing went out: the caller answers another way.
                in->replied = false;
                in->sends = 0;
                return rc;
            }
            // The requester waits on the data tag: close it with an empty
            // message, and let the header say why nothing came.
            h.status = status == RIO_OK ? rc : status;
            h.sent_len = 0;
            std::memcpy(in->reply_msg.data(), &h, sizeof h);
            ++in->sends;
            if (msg_isend(msg, in->source, base + kReplyDataTag, nullptr, 0, part_cq,
                          &in->send_part) != MSG_OK)
                --in->sends;
            rc = MSG_OK;
        }
    }
    if (rc == MSG_OK) {
        ++in->sends;
        rc = msg_isend(msg, in->source, base + kReplyHeaderTag, in->reply_msg.data(),
                       in->reply_msg.size(), part_cq, &in->send_part);
        if (rc != MSG_OK) --in->sends;
    }
    // The issuing reference: if every send already finished (or none could be
    // issued), the request is done here.
    if (--in->sends == 0) release_incoming(in);
    return rc;
}

void rio::release_incoming(rio_incoming *in) {
    {
        std::lock_guard<std::mutex> lk(in_mu);
        if (in->held != 0) {
            peer_held[static_cast<size_t>(in->source)] -= in->held;
            request_data_held -= in->held;
        }
        serving.erase(in);
    }
    // The last one out wakes a shadow thread that is winding down.
    if (--in_shadow_hands == 0 && stopping) {
        static Part wake{PartKind::Wake, nullptr};
        msg_completion_t c{};
        c.op = MSG_OP_USER;
        c.cookie = &wake;
        msg_cq_post(shadow_cq, &c);
    }
}

// ---- replies to our own requests ----

void rio::on_reply_header(Outgoing *out, const msg_completion_t &c) {
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

void rio::fail_all_outgoing(int status) {
    std::vector<Outgoing *> all;
    {
        std::lock_guard<std::mutex> lk(out_mu);
        for (auto &[id, o] : outgoing) all.push_back(o.get());
    }
    for (Outgoing *o : all) {
        int expected = 0;
        o->error.compare_exchange_strong(expected, status);
        // Its parts will never come back; complete it now.
        o->pending = 0;
        complete_outgoing(o);
    }
}
