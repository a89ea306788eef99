// The shadow thread: its dispatch loop over the shadow CQ, the receives it
// keeps posted for request headers, taking each request in (checks, the
// requester's memory bound, its separate data), and routing it: to the worker
// thread's CQ, to remote I/O (server_io.cpp) or to a registered handler.
#include "server.hpp"

#include <algorithm>
#include <cstring>

namespace remoteio {

Server::Server(rio_t *api, msg_context_t *msg, msg_cq_t *worker_cq, const rio_options_t &options,
               int size, size_t inline_max, ExportTable &exports, Stats &stats)
    : api_(api),
      msg_(msg),
      worker_cq_(worker_cq),
      opts_(options),
      inline_max_(inline_max),
      exports_(exports),
      stats_(stats),
      peer_held_(static_cast<size_t>(size), 0) {}

Server::~Server() {
    // A CQ with operations still bound (a request that outlived the finalize
    // timeout) cannot be freed safely; it then stays allocated, and so do
    // the requests and receive buffers its operations name.
    if (shadow_cq_ != nullptr && msg_cq_destroy(shadow_cq_) != MSG_OK) {
        shadow_cq_ = nullptr;
        for (auto &slot : slots_) slot.release();
        std::lock_guard<std::mutex> lk(in_mu_);
        for (auto &[in, owned] : serving_) owned.release();
    }
    if (reply_cq_ != nullptr && msg_cq_destroy(reply_cq_) != MSG_OK) {
        reply_cq_ = nullptr;
        std::lock_guard<std::mutex> lk(in_mu_);
        for (auto &[in, owned] : serving_) owned.release();
    }
}

int Server::open() {
    int rc = msg_cq_create(msg_, &shadow_cq_);
    if (rc != MSG_OK) return rc;
    rc = msg_cq_create_callback(msg_, &Server::on_reply_sent, this, &reply_cq_);
    if (rc != MSG_OK) {
        msg_cq_destroy(shadow_cq_);
        shadow_cq_ = nullptr;
        return rc;
    }
    file_io_ = FileIo::create(shadow_cq_, opts_.io_depth);
    for (int i = 0; i < opts_.header_receives; ++i) {
        auto slot = std::make_unique<RequestSlot>();
        slot->buf.resize(request_message_max(inline_max_));
        slots_.push_back(std::move(slot));
    }
    for (auto &slot : slots_) {
        rc = msg_irecv_flags(msg_, MSG_ANY_SOURCE, kTagRequest, slot->buf.data(), slot->buf.size(),
                             shadow_cq_, &slot->part, MSG_FLAG_RESERVED_TAG);
        if (rc != MSG_OK) {
            slot->retired = true;
            undo_open();
            return rc;
        }
        ++slots_live_;
    }
    return MSG_OK;
}

// A receive could not be posted: withdraw the ones that were, collect what
// was canceled so the CQs can go, and free them.
void Server::undo_open() {
    size_t n = 0;
    msg_cq_cancel_recvs(shadow_cq_, &n);
    for (size_t i = 0; i < n; ++i) {
        msg_completion_t c;
        msg_cq_wait(shadow_cq_, 1000, &c);
    }
    file_io_.reset();
    msg_cq_destroy(shadow_cq_);
    msg_cq_destroy(reply_cq_);
    shadow_cq_ = reply_cq_ = nullptr;
}

int Server::run() {
    for (;;) {
        int wait_ms = -1;
        if (stopping_ && !keep_winding_down(&wait_ms)) return MSG_OK;
        msg_completion_t c{};
        int rc = msg_cq_wait(shadow_cq_, wait_ms, &c);
        if (rc == MSG_ERR_TIMEOUT && wait_ms >= 0) continue;
        if (rc != MSG_OK) {
            // The libmsg context is gone (finalized, or its fabric wedged).
            stop_status_ = rc;
            return rc;
        }
        on_event(c);
        drain_file_io();
    }
}

// Winding down: every rank has its replies, so no request is coming and no
// awaited data is either. Withdraw every receive not yet taking data
// (request headers, data that never came, drains), finish what is in hand,
// and leave when all is back (false), or when the deadline has passed.
bool Server::keep_winding_down(int *wait_ms) {
    size_t n = 0;
    msg_cq_cancel_recvs(shadow_cq_, &n);
    if (in_shadow_hands_ == 0 && io_in_flight_ == 0 && io_waiting_.empty() && slots_live_ == 0)
        return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        stop_deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
        // What is still in hand (data still arriving, a stuck file transfer)
        // is abandoned; finalize reports the timeout.
        stop_status_ = RIO_ERR_TIMEOUT;
        return false;
    }
    *wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1000));
    return true;
}

void Server::stop(std::chrono::steady_clock::time_point deadline) {
    static Part stop_part{PartKind::Stop, nullptr};
    stop_deadline_ = deadline;
    msg_completion_t c{};
    c.op = MSG_OP_USER;
    c.cookie = &stop_part;
    msg_cq_post(shadow_cq_, &c);
}

// The dispatcher of the shadow CQ: on the shadow thread, which may block,
// call libmsg and run handlers.
void Server::on_event(const msg_completion_t &c) {
    auto *part = static_cast<Part *>(c.cookie);
    if (part == nullptr) return;  // a receive that only drains refused data
    switch (part->kind) {
        case PartKind::RequestReceive:
            on_request_header(static_cast<RequestSlot *>(part->owner), c);
            break;
        case PartKind::RequestData:
            on_request_data(static_cast<rio_incoming *>(part->owner), c);
            break;
        case PartKind::FileIo:
            on_io_done(static_cast<rio_incoming *>(part->owner));
            break;
        case PartKind::Stop:
            stopping_ = true;
            break;
        case PartKind::Wake:
            break;
        default:  // the callback CQs' kinds never come here
            break;
    }
}

// File transfers that finished during submit come back here, without the
// reaper's round trip through the CQ.
void Server::drain_file_io() {
    while (IoRequest *req = file_io_->poll())
        on_io_done(static_cast<rio_incoming *>(req->part.owner));
}

// ---- incoming requests ----

void Server::post_request_slot(RequestSlot *slot) {
    if (stopping_ ||
        msg_irecv_flags(msg_, MSG_ANY_SOURCE, kTagRequest, slot->buf.data(), slot->buf.size(),
                        shadow_cq_, &slot->part, MSG_FLAG_RESERVED_TAG) != MSG_OK) {
        slot->retired = true;
        --slots_live_;
    }
}

void Server::on_request_header(RequestSlot *slot, const msg_completion_t &c) {
    if (c.status != MSG_OK) {
        // Canceled at shutdown, or the context is finishing; a receive too
        // small for what came is a malformed request.
        if (c.status == MSG_ERR_TRUNCATED) {
            ++stats_.bad_requests;
            post_request_slot(slot);
            return;
        }
        slot->retired = true;
        --slots_live_;
        return;
    }
    RequestHeader h;
    const char *why = c.bytes >= sizeof h ? nullptr : "shorter than a request header";
    if (why == nullptr) {
        std::memcpy(&h, slot->buf.data(), sizeof h);
        why = check_request(h, c.bytes, inline_max_);
    }
    if (why != nullptr) {
        ++stats_.bad_requests;
        post_request_slot(slot);
        return;
    }
    auto owned = std::make_unique<rio_incoming>();
    rio_incoming *in = owned.get();
    in->owner = this;
    in->source = c.source;
    in->hdr = h;
    const char *inline_data = (h.flags & kDataInline) ? slot->buf.data() + sizeof h : nullptr;
    int refuse = accept(in, inline_data);
    post_request_slot(slot);  // the inline data is copied out of it
    {
        std::lock_guard<std::mutex> lk(in_mu_);
        serving_.emplace(in, std::move(owned));
    }
    ++in_shadow_hands_;
    if (refuse != RIO_OK) {
        if (inline_data == nullptr) drain_request_data(in);
        send_reply(in, refuse, nullptr, 0);
    } else if (inline_data == nullptr) {
        receive_request_data(in);
    } else {
        dispatch(in);
    }
}

// Whether a well-formed request may be taken in (its data within
// max_transfer and the requester's peer_memory); takes its inline data.
int Server::accept(rio_incoming *in, const char *inline_data) {
    const uint64_t len = in->hdr.data_len;
    if (inline_data == nullptr && len > opts_.max_transfer) return RIO_ERR_TOO_LARGE;
    if (!hold_request_data(in, len)) return RIO_ERR_PEER_MEMORY;
    if (inline_data != nullptr) in->data.assign(inline_data, static_cast<size_t>(len));
    return RIO_OK;
}

void Server::receive_request_data(rio_incoming *in) {
    if (stopping_) {
        // Its data would only be withdrawn again.
        drain_request_data(in);
        send_reply(in, RIO_ERR_SHUTDOWN, nullptr, 0);
        return;
    }
    // Address space now; memory as the data arrives.
    if (!in->data.reserve(static_cast<size_t>(in->hdr.data_len))) {
        drain_request_data(in);
        send_reply(in, MSG_ERR_NO_MEMORY, nullptr, 0);
        return;
    }
    if (msg_irecv_flags(msg_, in->source, static_cast<int>(in->hdr.tag_base) + kRequestDataTag,
                        in->data.data(), in->data.size(), shadow_cq_, &in->data_part,
                        MSG_FLAG_RESERVED_TAG) != MSG_OK)
        release_incoming(in);
}

void Server::on_request_data(rio_incoming *in, const msg_completion_t &c) {
    if (c.status == MSG_OK && c.bytes == in->data.size()) {
        dispatch(in);
        return;
    }
    // The requester is gone or sent less than it announced.
    if (c.status == MSG_OK || c.status == MSG_ERR_TRUNCATED) ++stats_.bad_requests;
    release_incoming(in);
}

bool Server::hold_request_data(rio_incoming *in, uint64_t bytes) {
    if (bytes == 0) return true;
    const size_t limit = opts_.peer_memory;
    std::lock_guard<std::mutex> lk(in_mu_);
    size_t &held = peer_held_[static_cast<size_t>(in->source)];
    if (bytes > limit || held > limit - bytes) return false;
    held += static_cast<size_t>(bytes);
    in->held = static_cast<size_t>(bytes);
    stats_.request_data_held += bytes;
    return true;
}

void Server::drain_request_data(rio_incoming *in) {
    // libmsg truncates the data into nothing; the receive completes with a
    // null cookie, which the dispatch loop ignores.
    static char sink;
    msg_irecv_flags(msg_, in->source, static_cast<int>(in->hdr.tag_base) + kRequestDataTag, &sink,
                    0, shadow_cq_, nullptr, MSG_FLAG_RESERVED_TAG);
}

// ---- routing ----

void Server::dispatch(rio_incoming *in) {
    const uint32_t cmd = in->hdr.command;
    if (stopping_)
        send_reply(in, RIO_ERR_SHUTDOWN, nullptr, 0);
    else if (in->hdr.target == RIO_TARGET_WORKER)
        forward_to_worker(in);
    else if (cmd == kCmdRead || cmd == kCmdWrite)
        serve_io(in);
    else if (cmd == kCmdStat)
        serve_stat(in);
    else
        run_handler(in);
}

void Server::forward_to_worker(rio_incoming *in) {
    const uint32_t cmd = in->hdr.command;
    if (cmd >= RIO_CMD_RESERVED) {
        send_reply(in, RIO_ERR_BAD_REQUEST, nullptr, 0);
        return;
    }
    if (worker_cq_ == nullptr) {
        send_reply(in, RIO_ERR_NO_HANDLER, nullptr, 0);
        return;
    }
    // The worker replies when it is ready; until then the request is in its
    // hands, not ours.
    in->forwarded = true;
    --in_shadow_hands_;
    ++stats_.requests_forwarded;
    msg_completion_t c{};
    c.op = RIO_OP_REQUEST;
    c.source = in->source;
    c.tag = static_cast<int>(cmd);
    c.bytes = in->data.size();
    c.cookie = in;
    msg_cq_post(worker_cq_, &c);
}

int Server::set_handler(uint32_t command, rio_handler_fn fn, void *arg) {
    std::lock_guard<std::mutex> lk(handler_mu_);
    if (fn == nullptr)
        handlers_.erase(command);
    else
        handlers_[command] = {fn, arg};
    return MSG_OK;
}

void Server::run_handler(rio_incoming *in) {
    std::pair<rio_handler_fn, void *> h{nullptr, nullptr};
    {
        std::lock_guard<std::mutex> lk(handler_mu_);
        auto it = handlers_.find(in->hdr.command);
        if (it != handlers_.end()) h = it->second;
    }
    if (h.first == nullptr) {
        send_reply(in, RIO_ERR_NO_HANDLER, nullptr, 0);
        return;
    }
    ++stats_.requests_served;
    h.first(api_, in, h.second);
}

}  // namespace remoteio
