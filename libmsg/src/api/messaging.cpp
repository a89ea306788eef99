// The messaging calls: argument checks, then the engine under the context lock.
// Blocking calls are an asynchronous call on a private CQ plus a wait.
#include "api/core.hpp"

namespace {

int check_common(msg_context_t *context, msg_cq_t *cq, const void *buf, size_t len) {
    if (int rc = msg::check_context_cq(context, cq); rc != MSG_OK) return rc;
    if (buf == nullptr && len > 0) return MSG_ERR_INVALID_ARG;
    return MSG_OK;
}

// Runs an engine call that, on success, leaves one operation bound to cq.
template <typename F>
int issue(msg_context_t *context, msg_cq_t *cq, F &&call) {
    msg::Core &core = *context->core;
    std::unique_lock<msg::TimedMutex> lk;
    if (!core.lock(lk)) return MSG_ERR_TRANSPORT;
    if (core.finalized || !core.engine) return MSG_ERR_FINALIZED;
    ++cq->in_flight;
    int rc = call(*core.engine);
    if (rc != MSG_OK) --cq->in_flight;
    lk.unlock();
    // A send to ourselves may be what a prober waits for.
    core.notify_probers();
    return rc;
}

// A tag a call may name: [0, MSG_TAG_MAX] (or the wildcard where allowed),
// the reserved range only with MSG_FLAG_RESERVED_TAG.
int check_tag(int tag, bool wildcard_ok, unsigned flags) {
    if (wildcard_ok && tag == MSG_ANY_TAG) return MSG_OK;
    if (tag < 0) return MSG_ERR_INVALID_ARG;
    if (tag >= MSG_TAG_RESERVED_FIRST && (flags & MSG_FLAG_RESERVED_TAG) == 0)
        return MSG_ERR_RESERVED_TAG;
    return MSG_OK;
}

constexpr unsigned kKnownFlags = MSG_FLAG_RESERVED_TAG;

}  // namespace

extern "C" int msg_isend_flags(msg_context_t *context, int dest, int tag, const void *buf,
                               size_t len, msg_cq_t *cq, void *cookie, unsigned flags) {
    int rc = check_common(context, cq, buf, len);
    if (rc != MSG_OK) return rc;
    if ((flags & ~kKnownFlags) != 0) return MSG_ERR_INVALID_ARG;
    if ((rc = context->core->check_rank(dest, false, "")) != MSG_OK) return rc;
    if ((rc = check_tag(tag, false, flags)) != MSG_OK) return rc;
    return issue(context, cq,
                 [&](msg::Engine &e) { return e.isend(dest, tag, buf, len, cq, cookie); });
}

extern "C" int msg_irecv_flags(msg_context_t *context, int source, int tag, void *buf,
                               size_t capacity, msg_cq_t *cq, void *cookie, unsigned flags) {
    int rc = check_common(context, cq, buf, capacity);
    if (rc != MSG_OK) return rc;
    if ((flags & ~kKnownFlags) != 0) return MSG_ERR_INVALID_ARG;
    if ((rc = context->core->check_rank(source, true, "")) != MSG_OK) return rc;
    if ((rc = check_tag(tag, true, flags)) != MSG_OK) return rc;
    const bool all_tags = (flags & MSG_FLAG_RESERVED_TAG) != 0;
    return issue(context, cq, [&](msg::Engine &e) {
        return e.irecv(source, tag, buf, capacity, cq, cookie, all_tags);
    });
}

extern "C" int msg_isend(msg_context_t *context, int dest, int tag, const void *buf, size_t len,
                         msg_cq_t *cq, void *cookie) {
    return msg_isend_flags(context, dest, tag, buf, len, cq, cookie, 0);
}

extern "C" int msg_irecv(msg_context_t *context, int source, int tag, void *buf, size_t capacity,
                         msg_cq_t *cq, void *cookie) {
    return msg_irecv_flags(context, source, tag, buf, capacity, cq, cookie, 0);
}

extern "C" int msg_send(msg_context_t *context, int dest, int tag, const void *buf, size_t len) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_isend(context, dest, tag, buf, len, cq, nullptr);
    });
}

extern "C" int msg_recv(msg_context_t *context, int source, int tag, void *buf, size_t capacity,
                        msg_completion_t *completion) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(
        context,
        [&](msg_cq_t *cq) { return msg_irecv(context, source, tag, buf, capacity, cq, nullptr); },
        [completion](const msg_completion_t &c) {
            if (completion != nullptr) *completion = c;
        });
}
