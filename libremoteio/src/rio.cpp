// libremoteio's C API: start-up and orderly finalize, issuing requests and
// remote I/O, exports, and status text. Serving lives in shadow.cpp.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "rio_impl.hpp"

using namespace remoteio;

using remoteio::Outgoing;
using remoteio::RequestHeader;

namespace {

int tag_of(uint32_t base, int offset) {
    return static_cast<int>(base) + offset;
}

// The finalize handshake's messages (empty): "I have all my replies".
constexpr int kTagFinalize = kTagRequest + 1;
static_assert(kTagFinalize < kTagFirstDynamic);

// A random 64-bit value from the kernel, or false if it gives none.
bool random64(uint64_t *out) {
    size_t got = 0;
    auto *p = reinterpret_cast<unsigned char *>(out);
    while (got < sizeof *out) {
        ssize_t n = getrandom(p + got, sizeof *out - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += static_cast<size_t>(n);
    }
    return true;
}

// A private CQ for one blocking call.
struct OneShot {
    explicit OneShot(msg_context_t *m) { rc = msg_cq_create(m, &cq); }
    ~OneShot() {
        if (cq != nullptr) msg_cq_destroy(cq);
    }
    OneShot(const OneShot &) = delete;
    OneShot &operator=(const OneShot &) = delete;
    msg_cq_t *cq = nullptr;
    int rc;
};

int wait_one(msg_cq_t *cq, size_t *bytes) {
    msg_completion_t c{};
    int rc = msg_cq_wait(cq, -1, &c);
    if (rc != MSG_OK) return rc;
    if (bytes != nullptr) *bytes = c.bytes;
    return c.status;
}

}  // namespace

namespace remoteio {
Export::~Export() {
    if (map != nullptr) munmap(map, map_len);
    if (fd >= 0) close(fd);
}

void Export::map_range() {
    if (length == 0) return;
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    map_skew = static_cast<size_t>(base % page);
    map_len = static_cast<size_t>(length) + map_skew;
    void *p =
        mmap(nullptr, map_len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(base - map_skew));
    map = p == MAP_FAILED ? nullptr : static_cast<char *>(p);
}

const char *Export::resident(uint64_t offset, size_t len) const {
    if (map == nullptr || len == 0) return nullptr;
    // mincore does not know where the file ends now: a file that shrank since
    // it was exported must go the file I/O way, which reports the short read.
    struct stat st;
    if (fstat(fd, &st) != 0 || base + offset + len > static_cast<uint64_t>(st.st_size))
        return nullptr;
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t first = (map_skew + static_cast<size_t>(offset)) / page * page;
    const size_t end = map_skew + static_cast<size_t>(offset) + len;
    const size_t pages = (end - first + page - 1) / page;
    std::vector<unsigned char> in_core(pages);
    // Pages past the end of a file that shrank are reported absent (or the
    // call fails): the read then takes the file I/O path, which says so.
    if (mincore(map + first, end - first, in_core.data()) != 0) return nullptr;
    for (unsigned char c : in_core)
        if ((c & 1) == 0) return nullptr;
    return map + map_skew + offset;
}
}  // namespace remoteio

rio::~rio() = default;

// ---- issuing ----

int rio::issue(int dest, int target, uint32_t command, const void *data, size_t len, void *reply,
               size_t reply_capacity, msg_cq_t *cq, void *cookie, const RequestHeader &io,
               bool is_write) {
    if (closing) return finalized ? static_cast<int>(MSG_ERR_FINALIZED) : RIO_ERR_SHUTDOWN;
    if (dest < 0 || dest >= size) return MSG_ERR_UNKNOWN_RANK;
    if (cq == nullptr || (data == nullptr && len > 0) || (reply == nullptr && reply_capacity > 0))
        return MSG_ERR_INVALID_ARG;

    auto owned = std::make_unique<Outgoing>();
    Outgoing *out = owned.get();
    out->rank = dest;
    out->command = command;
    out->is_write = is_write;
    out->write_len = is_write ? len : 0;
    out->reply_buf = static_cast<char *>(reply);
    out->reply_capacity = reply_capacity;
    out->cq = cq;
    out->cookie = cookie;
    uint64_t block = next_tag_block++ % ((0x7fffffffu - kTagFirstDynamic) / kTagsPerRequest);
    auto tag_base = static_cast<uint32_t>(kTagFirstDynamic + block * kTagsPerRequest);

    RequestHeader h = io;
    h.magic = kRequestMagic;
    h.version = kVersion;
    h.target = static_cast<uint8_t>(target);
    h.command = command;
    h.tag_base = tag_base;
    h.data_len = len;
    h.reply_capacity = reply_capacity;
    bool data_inline = len <= inline_max;
    bool reply_direct = reply_capacity > inline_max;
    h.flags =
        static_cast<uint8_t>((data_inline ? kDataInline : 0) | (reply_direct ? kReplyDirect : 0));
    out->request_msg.resize(sizeof h + (data_inline ? len : 0));
    std::memcpy(out->request_msg.data(), &h, sizeof h);
    if (data_inline && len > 0) std::memcpy(out->request_msg.data() + sizeof h, data, len);
    out->reply_msg.resize(sizeof(ReplyHeader) + (reply_direct ? 0 : reply_capacity));
    {
        std::lock_guard<std::mutex> lk(out_mu);
        out->id = next_id++;
        outgoing.emplace(out->id, std::move(owned));
    }
    ++requests_issued;

    // Sends first: a reply that beats our receives waits in libmsg as an
    // unexpected message, so the order costs nothing and a send refused at
    // once leaves no receive behind.
    ++out->pending;
    int rc = msg_isend(msg, dest, kTagRequest, out->request_msg.data(), out->request_msg.size(),
                       part_cq, &out->send_part);
    if (rc != MSG_OK) {
        --out->pending;
        std::lock_guard<std::mutex> lk(out_mu);
        outgoing.erase(out->id);
        out_cv.notify_all();
        return rc;
    }
    if (!data_inline) {
        ++out->pending;
        rc = msg_isend(msg, dest, tag_of(tag_base, kRequestDataTag), data, len, part_cq,
                       &out->send_part);
        if (rc != MSG_OK) fail_part(out, rc);
    }
    if (reply_direct && out->error == 0) {
        ++out->pending;
        rc = msg_irecv(msg, dest, tag_of(tag_base, kReplyDataTag), reply, reply_capacity, part_cq,
                       &out->data_part);
        if (rc != MSG_OK) fail_part(out, rc);
    }
    if (out->error == 0) {
        ++out->pending;
        rc = msg_irecv(msg, dest, tag_of(tag_base, kReplyHeaderTag), out->reply_msg.data(),
                       out->reply_msg.size(), part_cq, &out->header_part);
        if (rc != MSG_OK) fail_part(out, rc);
    }
    drop_pending(out);
    return MSG_OK;
}

// A part that failed, or could not be issued (its pending count goes too).
void rio::fail_part(Outgoing *out, int status) {
    int expected = 0;
    out->error.compare_exchange_strong(expected, status);
    drop_pending(out);
}

void rio::drop_pending(Outgoing *out) {
    if (--out->pending == 0) complete_outgoing(out);
}

void rio::complete_outgoing(Outgoing *out) {
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
        ++replies_received;
    }
    msg_cq_t *cq = out->cq;
    {
        std::lock_guard<std::mutex> lk(out_mu);
        outgoing.erase(out->id);  // frees out
        out_cv.notify_all();
    }
    msg_cq_post(cq, &c);
}

// ---- the C API ----

extern "C" void rio_options_init(rio_options_t *o) {
    if (o == nullptr) return;
    o->header_receives = 64;
    o->io_depth = 16;
    o->io_memory = size_t{256} << 20;
    o->max_transfer = size_t{256} << 20;
    o->finalize_timeout_ms = 0;  // 0: libmsg's timeout
    o->peer_memory = 0;          // 0: max_transfer
}

extern "C" int rio_init(msg_context_t *msg, msg_cq_t *worker_cq, const rio_options_t *options,
                        rio_t **out) {
    if (msg == nullptr || out == nullptr) return MSG_ERR_INVALID_ARG;
    *out = nullptr;
    rio_options_t o;
    rio_options_init(&o);
    if (options != nullptr) o = *options;
    if (o.header_receives < 1 || o.io_depth < 1 || o.io_depth > 4096 || o.io_memory == 0 ||
        o.max_transfer == 0 || o.finalize_timeout_ms < 0)
        return MSG_ERR_INVALID_ARG;
    msg_info_t info;
    int rc = msg_get_info(msg, &info);
    if (rc != MSG_OK) return rc;
    if (o.finalize_timeout_ms == 0) o.finalize_timeout_ms = info.timeout_ms;
    if (o.peer_memory == 0) o.peer_memory = o.max_transfer;
    auto r = std::make_unique<rio>();
    r->msg = msg;
    r->worker_cq = worker_cq;
    r->opts = o;
    r->rank = info.rank;
    r->size = info.size;
    // Request headers and small data travel eagerly in one message.
    r->inline_max =
        info.eager_max > sizeof(RequestHeader) ? info.eager_max - sizeof(RequestHeader) : 0;
    r->peer_held.assign(static_cast<size_t>(info.size), 0);
    if ((rc = msg_cq_create(msg, &r->shadow_cq)) != MSG_OK) return rc;
    rc = msg_cq_create_callback(
        msg, [](void *arg, const msg_completion_t *c) { static_cast<rio *>(arg)->handle(*c); },
        r.get(), &r->part_cq);
    if (rc != MSG_OK) {
        msg_cq_destroy(r->shadow_cq);
        return rc;
    }
    r->file_io = remoteio::FileIo::create(r->shadow_cq, o.io_depth);
    for (int i = 0; i < o.header_receives; ++i) {
        auto slot = std::make_unique<remoteio::RequestSlot>();
        slot->buf.resize(remoteio::request_message_max(r->inline_max));
        r->slots.push_back(std::move(slot));
    }
    for (auto &slot : r->slots) {
        rc = msg_irecv(msg, MSG_ANY_SOURCE, remoteio::kTagRequest, slot->buf.data(),
                       slot->buf.size(), r->shadow_cq, &slot->part);
        if (rc != MSG_OK) {
            slot->retired = true;
            size_t n;
            msg_cq_cancel_recvs(r->shadow_cq, &n);
            // Collect what was canceled so the CQ can go.
            for (size_t i = 0; i < n; ++i) {
                msg_completion_t c;
                msg_cq_wait(r->shadow_cq, 1000, &c);
            }
            r->file_io.reset();
            msg_cq_destroy(r->shadow_cq);
            msg_cq_destroy(r->part_cq);
            r->shadow_cq = r->part_cq = nullptr;
            return rc;
        }
        ++r->slots_live;
    }
    rio *raw = r.get();
    r->shadow = std::thread([raw] { raw->shadow_thread(); });
    *out = r.release();
    return MSG_OK;
}

int rio::finalize_handshake(int timeout_ms) {
    if (size == 1) return RIO_OK;
    msg_cq_t *cq = nullptr;
    int rc = msg_cq_create(msg, &cq);
    if (rc != MSG_OK) return rc;
    int pending = 0, status = RIO_OK;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        if (msg_irecv(msg, peer, kTagFinalize, nullptr, 0, cq, nullptr) == MSG_OK) ++pending;
        if (msg_isend(msg, peer, kTagFinalize, nullptr, 0, cq, nullptr) == MSG_OK) ++pending;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool canceled = false;
    while (pending > 0) {
        // Rounded up: a wait cut short by rounding would give up before the deadline.
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
        msg_completion_t c{};
        rc = msg_cq_wait(cq, canceled ? 1000 : static_cast<int>(std::max<int64_t>(left.count(), 0)),
                         &c);
        if (rc == MSG_ERR_TIMEOUT) {
            if (canceled) break;  // a send to a rank that takes nothing: leave it
            if (std::chrono::steady_clock::now() < deadline) continue;  // woke early
            // A rank that never got here: stop listening for it.
            status = RIO_ERR_TIMEOUT;
            msg_cq_cancel_recvs(cq, nullptr);
            canceled = true;
            continue;
        }
        if (rc != MSG_OK) {
            status = rc;
            break;
        }
        --pending;
        // A failed rank is not waited for; its word is not needed.
        if (c.status != MSG_OK && c.status != MSG_ERR_PEER_FAILED && c.status != MSG_ERR_CANCELED &&
            status == RIO_OK)
            status = c.status;
    }
    // A CQ with a send still bound cannot be freed; it then stays allocated.
    msg_cq_destroy(cq);
    return status;
}

extern "C" int rio_finalize(rio_t *r) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    if (r->finalized) return MSG_OK;
    r->closing = true;
    int status = RIO_OK;
    const auto limit = std::chrono::milliseconds(r->opts.finalize_timeout_ms);
    {
        std::unique_lock<std::mutex> lk(r->out_mu);
        if (!r->out_cv.wait_for(lk, limit, [r] { return r->outgoing.empty(); }))
            status = RIO_ERR_TIMEOUT;
    }
    // Every live rank has its replies: no request is left in anyone's hands.
    // Over the fabric, bounded, so that a rank that never gets here costs a
    // timeout rather than a hang.
    int rc = r->finalize_handshake(r->opts.finalize_timeout_ms);
    if (status == RIO_OK && rc != RIO_OK) status = rc;
    msg_completion_t stop{};
    static remoteio::Part stop_part{remoteio::PartKind::Stop, nullptr};
    stop.op = MSG_OP_USER;
    stop.cookie = &stop_part;
    r->stop_deadline = std::chrono::steady_clock::now() + limit;
    msg_cq_post(r->shadow_cq, &stop);
    if (r->shadow.joinable()) r->shadow.join();
    r->file_io.reset();
    if (status == RIO_OK && r->stop_status != 0) status = r->stop_status;
    r->finalized = true;
    return status;
}

extern "C" void rio_destroy(rio_t *r) {
    if (r == nullptr) return;
    rio_finalize(r);
    // A CQ with operations still bound (a request that outlived the finalize
    // timeout) cannot be freed safely; it then stays allocated, and so do
    // the buffers its operations name.
    if (r->shadow_cq != nullptr && msg_cq_destroy(r->shadow_cq) != MSG_OK) {
        r->shadow_cq = nullptr;
        std::lock_guard<std::mutex> lk(r->in_mu);
        for (auto &[in, owned] : r->serving) owned.release();
        for (auto &slot : r->slots) slot.release();
    }
    if (r->part_cq != nullptr && msg_cq_destroy(r->part_cq) != MSG_OK) r->part_cq = nullptr;
    if (!r->outgoing.empty()) {
        // Their libmsg operations may still name them: keep them.
        for (auto &[id, o] : r->outgoing) o.release();
    }
    delete r;
}

extern "C" int rio_request(rio_t *r, int rank, int target, uint32_t command, const void *data,
                           size_t len, void *reply, size_t reply_capacity, msg_cq_t *cq,
                           void *cookie) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    if (target != RIO_TARGET_WORKER && target != RIO_TARGET_SHADOW) return MSG_ERR_INVALID_ARG;
    if (command >= RIO_CMD_RESERVED) return MSG_ERR_INVALID_ARG;
    return r->issue(rank, target, command, data, len, reply, reply_capacity, cq, cookie, {}, false);
}

extern "C" int rio_call(rio_t *r, int rank, int target, uint32_t command, const void *data,
                        size_t len, void *reply, size_t reply_capacity, size_t *reply_len) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    OneShot one(r->msg);
    if (one.rc != MSG_OK) return one.rc;
    int rc =
        rio_request(r, rank, target, command, data, len, reply, reply_capacity, one.cq, nullptr);
    if (rc != MSG_OK) return rc;
    return wait_one(one.cq, reply_len);
}

extern "C" int rio_incoming_info(const rio_incoming_t *in, rio_request_info_t *info) {
    if (in == nullptr || info == nullptr) return MSG_ERR_INVALID_ARG;
    info->source = in->source;
    info->command = in->hdr.command;
    info->data = in->data.data();
    info->len = in->data.size();
    info->reply_capacity = in->hdr.reply_capacity;
    return MSG_OK;
}

extern "C" int rio_reply(rio_t *r, rio_incoming_t *in, int status, const void *data, size_t len) {
    if (r == nullptr || in == nullptr || in->owner != r || (data == nullptr && len > 0))
        return MSG_ERR_INVALID_ARG;
    if (in->replied) return MSG_ERR_INVALID_ARG;
    return r->send_reply(in, status, data, len);
}

extern "C" int rio_set_handler(rio_t *r, uint32_t command, rio_handler_fn fn, void *arg) {
    if (r == nullptr || command >= RIO_CMD_RESERVED) return MSG_ERR_INVALID_ARG;
    std::lock_guard<std::mutex> lk(r->handler_mu);
    if (fn == nullptr)
        r->handlers.erase(command);
    else
        r->handlers[command] = {fn, arg};
    return MSG_OK;
}

// ---- exports and remote I/O ----

extern "C" int rio_export(rio_t *r, const char *path, uint64_t offset, uint64_t length, int flags,
                          uint64_t *handle) {
    if (r == nullptr || path == nullptr || handle == nullptr) return MSG_ERR_INVALID_ARG;
    if (flags != RIO_EXPORT_READ_ONLY && flags != RIO_EXPORT_READ_WRITE) return MSG_ERR_INVALID_ARG;
    auto e = std::make_shared<remoteio::Export>();
    e->writable = flags == RIO_EXPORT_READ_WRITE;
    e->fd = open(path, (e->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (e->fd < 0) return RIO_ERR_IO;
    struct stat st;
    if (fstat(e->fd, &st) != 0 || !S_ISREG(st.st_mode)) return RIO_ERR_IO;
    auto file_size = static_cast<uint64_t>(st.st_size);
    if (length == RIO_EXPORT_TO_END) {
        if (offset > file_size) return RIO_ERR_RANGE;
        length = file_size - offset;
    }
    if (offset + length < offset) return RIO_ERR_RANGE;
    e->base = offset;
    e->length = length;
    e->map_range();
    std::lock_guard<std::mutex> lk(r->exp_mu);
    uint64_t h = 0;
    do {
        if (!random64(&h)) return MSG_ERR_NOT_SUPPORTED;
    } while (h == 0 || r->exports.count(h) != 0);
    r->exports.emplace(h, std::move(e));
    *handle = h;
    return MSG_OK;
}

extern "C" int rio_withdraw(rio_t *r, uint64_t handle) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    std::lock_guard<std::mutex> lk(r->exp_mu);
    return r->exports.erase(handle) == 1 ? RIO_OK : RIO_ERR_BAD_HANDLE;
}

extern "C" int rio_read(rio_t *r, int rank, uint64_t handle, uint64_t offset, void *buf, size_t len,
                        msg_cq_t *cq, void *cookie) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    RequestHeader io{};
    io.handle = handle;
    io.offset = offset;
    io.length = len;
    return r->issue(rank, RIO_TARGET_SHADOW, remoteio::kCmdRead, nullptr, 0, buf, len, cq, cookie,
                    io, false);
}

extern "C" int rio_write(rio_t *r, int rank, uint64_t handle, uint64_t offset, const void *data,
                         size_t len, msg_cq_t *cq, void *cookie) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    RequestHeader io{};
    io.handle = handle;
    io.offset = offset;
    io.length = len;
    return r->issue(rank, RIO_TARGET_SHADOW, remoteio::kCmdWrite, data, len, nullptr, 0, cq, cookie,
                    io, true);
}

extern "C" int rio_stat(rio_t *r, int rank, uint64_t handle, uint64_t *length, int *flags) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    OneShot one(r->msg);
    if (one.rc != MSG_OK) return one.rc;
    RequestHeader io{};
    io.handle = handle;
    uint64_t reply[2] = {0, 0};
    int rc = r->issue(rank, RIO_TARGET_SHADOW, remoteio::kCmdStat, nullptr, 0, reply, sizeof reply,
                      one.cq, nullptr, io, false);
    if (rc != MSG_OK) return rc;
    size_t got = 0;
    rc = wait_one(one.cq, &got);
    if (rc != RIO_OK) return rc;
    if (got != sizeof reply) return MSG_ERR_PROTOCOL;
    if (length != nullptr) *length = reply[0];
    if (flags != nullptr) *flags = static_cast<int>(reply[1]);
    return RIO_OK;
}

extern "C" int rio_read_sync(rio_t *r, int rank, uint64_t handle, uint64_t offset, void *buf,
                             size_t len, size_t *moved) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    OneShot one(r->msg);
    if (one.rc != MSG_OK) return one.rc;
    int rc = rio_read(r, rank, handle, offset, buf, len, one.cq, nullptr);
    if (rc != MSG_OK) return rc;
    return wait_one(one.cq, moved);
}

extern "C" int rio_write_sync(rio_t *r, int rank, uint64_t handle, uint64_t offset,
                              const void *data, size_t len) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    OneShot one(r->msg);
    if (one.rc != MSG_OK) return one.rc;
    int rc = rio_write(r, rank, handle, offset, data, len, one.cq, nullptr);
    if (rc != MSG_OK) return rc;
    return wait_one(one.cq, nullptr);
}

extern "C" int rio_get_stats(const rio_t *r, rio_stats_t *s) {
    if (r == nullptr || s == nullptr) return MSG_ERR_INVALID_ARG;
    s->requests_issued = r->requests_issued;
    s->replies_received = r->replies_received;
    s->requests_served = r->requests_served;
    s->requests_forwarded = r->requests_forwarded;
    s->requests_refused = r->requests_refused;
    s->bad_requests = r->bad_requests;
    s->bytes_read = r->bytes_read;
    s->bytes_written = r->bytes_written;
    s->request_data_held = r->request_data_held;
    return MSG_OK;
}

extern "C" const char *rio_strerror(int status) {
    switch (status) {
        case RIO_ERR_BAD_HANDLE:
            return "unknown or withdrawn export handle";
        case RIO_ERR_RANGE:
            return "outside the exported byte range";
        case RIO_ERR_READ_ONLY:
            return "export is read-only";
        case RIO_ERR_IO:
            return "I/O error on the server's file (or file shorter than its export)";
        case RIO_ERR_BAD_REQUEST:
            return "malformed request";
        case RIO_ERR_NO_HANDLER:
            return "no handler for this command at the target";
        case RIO_ERR_SHUTDOWN:
            return "target is shutting down";
        case RIO_ERR_TOO_LARGE:
            return "request or transfer larger than the server allows";
        case RIO_ERR_TIMEOUT:
            return "gave up waiting for outstanding requests or for a rank to finalize";
        case RIO_ERR_PEER_MEMORY:
            return "the requester already has as much request data held at the target as it "
                   "allows";
        default:
            return msg_strerror(status);
    }
}
