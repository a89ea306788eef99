// libremoteio's C API: argument checks, start-up and the orderly finalize,
// and the entry points that hand requests to the client, replies and handlers
// to the server and exports to the export table. Status text lives here too.
#include <chrono>
#include <memory>
#include <thread>

#include "client.hpp"
#include "exports.hpp"
#include "handshake.hpp"
#include "msg_internal/one_shot.hpp"
#include "server.hpp"
#include "stats.hpp"
#include "wire.hpp"

using remoteio::Request;

// What stands behind rio_t: the requesting side, the serving side (whose
// shadow thread this owns), the exports they share and the counters.
struct rio {
    rio(msg_context_t *m, msg_cq_t *worker_cq, const rio_options_t &o, const msg_info_t &info,
        size_t inline_max)
        : msg(m),
          rank(info.rank),
          size(info.size),
          finalize_timeout_ms(o.finalize_timeout_ms),
          client(m, info.size, inline_max, stats),
          server(this, m, worker_cq, o, info.size, inline_max, exports, stats) {}

    msg_context_t *msg;
    int rank, size;
    int finalize_timeout_ms;
    remoteio::Stats stats;
    remoteio::ExportTable exports;
    remoteio::Client client;
    remoteio::Server server;  // after the client: freed before it
    std::thread shadow;
};

namespace {

// One blocking call: issue(cq) on a private CQ, then its completion; *bytes gets what it moved.
template <typename Issue>
int wait_one(rio_t *r, size_t *bytes, Issue &&issue) {
    return viaduct::one_shot(r->msg, issue, [bytes](const msg_completion_t &c) {
        if (bytes != nullptr) *bytes = c.bytes;
    });
}

bool options_valid(const rio_options_t &o) {
    return o.header_receives >= 1 && o.io_depth >= 1 && o.io_depth <= 4096 && o.io_memory != 0 &&
           o.max_transfer != 0 && o.finalize_timeout_ms >= 0;
}

}  // namespace

// ---- start-up and finalize ----

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
    if (!options_valid(o)) return MSG_ERR_INVALID_ARG;
    msg_info_t info;
    int rc = msg_get_info(msg, &info);
    if (rc != MSG_OK) return rc;
    if (o.finalize_timeout_ms == 0) o.finalize_timeout_ms = info.timeout_ms;
    if (o.peer_memory == 0) o.peer_memory = o.max_transfer;
    // Request headers and small data travel eagerly in one message.
    const size_t header = sizeof(remoteio::RequestHeader);
    const size_t inline_max = info.eager_max > header ? info.eager_max - header : 0;
    auto r = std::make_unique<rio>(msg, worker_cq, o, info, inline_max);
    if ((rc = r->client.open()) != MSG_OK) return rc;
    if ((rc = r->server.open()) != MSG_OK) return rc;
    rio *raw = r.get();
    r->shadow = std::thread([raw] {
        // If the libmsg context went away under the shadow thread, nothing
        // more can move: fail what this process issued so nobody waits.
        int status = raw->server.run();
        if (status != MSG_OK) raw->client.fail_all(status);
    });
    *out = r.release();
    return MSG_OK;
}

extern "C" int rio_finalize(rio_t *r) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    if (r->client.finalized()) return MSG_OK;
    r->client.close();
    int status = RIO_OK;
    const auto limit = std::chrono::milliseconds(r->finalize_timeout_ms);
    if (!r->client.wait_idle(limit)) status = RIO_ERR_TIMEOUT;
    // Every live rank has its replies: no request is left in anyone's hands.
    int rc = remoteio::finalize_handshake(r->msg, r->rank, r->size, r->finalize_timeout_ms);
    if (status == RIO_OK && rc != RIO_OK) status = rc;
    r->server.stop(std::chrono::steady_clock::now() + limit);
    if (r->shadow.joinable()) r->shadow.join();
    r->server.close_file_io();
    if (status == RIO_OK && r->server.stop_status() != 0) status = r->server.stop_status();
    r->client.mark_finalized();
    return status;
}

extern "C" void rio_destroy(rio_t *r) {
    if (r == nullptr) return;
    rio_finalize(r);
    delete r;
}

// ---- requests ----

extern "C" int rio_request(rio_t *r, int rank, int target, uint32_t command, const void *data,
                           size_t len, void *reply, size_t reply_capacity, msg_cq_t *cq,
                           void *cookie) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    if (target != RIO_TARGET_WORKER && target != RIO_TARGET_SHADOW) return MSG_ERR_INVALID_ARG;
    if (command >= RIO_CMD_RESERVED) return MSG_ERR_INVALID_ARG;
    return r->client.issue(Request{.rank = rank,
                                   .target = target,
                                   .command = command,
                                   .data = data,
                                   .len = len,
                                   .reply = reply,
                                   .reply_capacity = reply_capacity,
                                   .cq = cq,
                                   .cookie = cookie});
}

extern "C" int rio_call(rio_t *r, int rank, int target, uint32_t command, const void *data,
                        size_t len, void *reply, size_t reply_capacity, size_t *reply_len) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    return wait_one(r, reply_len, [&](msg_cq_t *cq) {
        return rio_request(r, rank, target, command, data, len, reply, reply_capacity, cq, nullptr);
    });
}

// ---- serving IPC requests ----

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
    if (r == nullptr || in == nullptr || in->owner != &r->server || (data == nullptr && len > 0))
        return MSG_ERR_INVALID_ARG;
    if (in->replied) return MSG_ERR_INVALID_ARG;
    return r->server.send_reply(in, status, data, len);
}

extern "C" int rio_set_handler(rio_t *r, uint32_t command, rio_handler_fn fn, void *arg) {
    if (r == nullptr || command >= RIO_CMD_RESERVED) return MSG_ERR_INVALID_ARG;
    return r->server.set_handler(command, fn, arg);
}

// ---- exports and remote I/O ----

extern "C" int rio_export(rio_t *r, const char *path, uint64_t offset, uint64_t length, int flags,
                          uint64_t *handle) {
    if (r == nullptr || path == nullptr || handle == nullptr) return MSG_ERR_INVALID_ARG;
    if (flags != RIO_EXPORT_READ_ONLY && flags != RIO_EXPORT_READ_WRITE) return MSG_ERR_INVALID_ARG;
    return r->exports.add(path, offset, length, flags == RIO_EXPORT_READ_WRITE, handle);
}

extern "C" int rio_withdraw(rio_t *r, uint64_t handle) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    return r->exports.withdraw(handle);
}

extern "C" int rio_read(rio_t *r, int rank, uint64_t handle, uint64_t offset, void *buf, size_t len,
                        msg_cq_t *cq, void *cookie) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    return r->client.issue(Request{.rank = rank,
                                   .target = RIO_TARGET_SHADOW,
                                   .command = remoteio::kCmdRead,
                                   .reply = buf,
                                   .reply_capacity = len,
                                   .cq = cq,
                                   .cookie = cookie,
                                   .handle = handle,
                                   .offset = offset,
                                   .length = len});
}

extern "C" int rio_write(rio_t *r, int rank, uint64_t handle, uint64_t offset, const void *data,
                         size_t len, msg_cq_t *cq, void *cookie) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    return r->client.issue(Request{.rank = rank,
                                   .target = RIO_TARGET_SHADOW,
                                   .command = remoteio::kCmdWrite,
                                   .data = data,
                                   .len = len,
                                   .cq = cq,
                                   .cookie = cookie,
                                   .handle = handle,
                                   .offset = offset,
                                   .length = len});
}

extern "C" int rio_stat(rio_t *r, int rank, uint64_t handle, uint64_t *length, int *flags) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    uint64_t reply[2] = {0, 0};
    size_t got = 0;
    int rc = wait_one(r, &got, [&](msg_cq_t *cq) {
        return r->client.issue(Request{.rank = rank,
                                       .target = RIO_TARGET_SHADOW,
                                       .command = remoteio::kCmdStat,
                                       .reply = reply,
                                       .reply_capacity = sizeof reply,
                                       .cq = cq,
                                       .handle = handle});
    });
    if (rc != RIO_OK) return rc;
    if (got != sizeof reply) return MSG_ERR_PROTOCOL;
    if (length != nullptr) *length = reply[0];
    if (flags != nullptr) *flags = static_cast<int>(reply[1]);
    return RIO_OK;
}

extern "C" int rio_read_sync(rio_t *r, int rank, uint64_t handle, uint64_t offset, void *buf,
                             size_t len, size_t *moved) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    return wait_one(r, moved, [&](msg_cq_t *cq) {
        return rio_read(r, rank, handle, offset, buf, len, cq, nullptr);
    });
}

extern "C" int rio_write_sync(rio_t *r, int rank, uint64_t handle, uint64_t offset,
                              const void *data, size_t len) {
    if (r == nullptr) return MSG_ERR_INVALID_ARG;
    return wait_one(r, nullptr, [&](msg_cq_t *cq) {
        return rio_write(r, rank, handle, offset, data, len, cq, nullptr);
    });
}

// ---- statistics and status text ----

extern "C" int rio_get_stats(const rio_t *r, rio_stats_t *s) {
    if (r == nullptr || s == nullptr) return MSG_ERR_INVALID_ARG;
    r->stats.fill(s);
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
