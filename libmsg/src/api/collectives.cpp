// The collective calls: argument checks, a schedule built for this rank
// (collective/), then started on the next collective tag under the context
// lock. Blocking forms are the nonblocking ones plus a wait on a private CQ.
#include <limits>

#include "api/core.hpp"
#include "collective/algorithms.hpp"

namespace {

using msg::Schedule;

int job_size(msg_context_t *context) {
    return context->core->info.size;
}

// bytes * n without overflow, else MSG_ERR_INVALID_ARG.
int times(size_t bytes, size_t n, size_t *out) {
    if (n != 0 && bytes > std::numeric_limits<size_t>::max() / n) return MSG_ERR_INVALID_ARG;
    *out = bytes * n;
    return MSG_OK;
}

// Builds the schedule (outside the lock: it allocates scratch memory), then
// starts it; on success one completion will reach cq.
template <typename Build>
int start(msg_context_t *context, msg_cq_t *cq, void *cookie, int source, size_t out_bytes,
          Build &&build) {
    msg::Core &core = *context->core;
    try {
        std::unique_ptr<Schedule> s = core.collectives.new_schedule(core.info.rank, core.info.size);
        build(*s);
        std::unique_lock<msg::TimedMutex> lk;
        if (!core.lock(lk)) return MSG_ERR_TRANSPORT;
        if (core.finalized || !core.engine) return MSG_ERR_FINALIZED;
        ++cq->in_flight;
        const int rc =
            core.collectives.start(*core.engine, std::move(s), {cq, cookie, source, out_bytes, 0});
        if (rc != MSG_OK) --cq->in_flight;
        core.collectives.run();
        return rc;
    } catch (const std::bad_alloc &) {
        return MSG_ERR_NO_MEMORY;
    }
}

int check_root(msg_context_t *context, int root) {
    return context->core->check_rank(root, false, "collective root: ");
}

}  // namespace

extern "C" int msg_reduction_create(msg_context_t *context, msg_reduce_fn fn, void *arg, int *op) {
    if (context == nullptr || fn == nullptr || op == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    return context->core->collectives.create_reduction(fn, arg, op);
}

extern "C" int msg_reduction_free(msg_context_t *context, int op) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return context->core->collectives.free_reduction(op);
}

extern "C" int msg_ibcast(msg_context_t *context, void *buf, size_t bytes, int root, msg_cq_t *cq,
                          void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    if ((rc = check_root(context, root)) != MSG_OK) return rc;
    if (buf == nullptr && bytes > 0) return MSG_ERR_INVALID_ARG;
    return start(context, cq, cookie, root, bytes,
                 [&](Schedule &s) { msg::build_bcast(s, static_cast<char *>(buf), bytes, root); });
}

extern "C" int msg_ireduce(msg_context_t *context, const void *sendbuf, void *recvbuf, size_t count,
                           int datatype, int op, int root, msg_cq_t *cq, void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    if ((rc = check_root(context, root)) != MSG_OK) return rc;
    msg::Reduction red;
    if ((rc = context->core->collectives.find_reduction(datatype, op, &red)) != MSG_OK) return rc;
    size_t bytes = 0;
    if ((rc = times(red.element_size(), count, &bytes)) != MSG_OK) return rc;
    const bool at_root = context->core->info.rank == root;
    if (bytes > 0 && (sendbuf == nullptr || (at_root && recvbuf == nullptr)))
        return MSG_ERR_INVALID_ARG;
    return start(context, cq, cookie, root, at_root ? bytes : 0, [&](Schedule &s) {
        msg::build_reduce(s, static_cast<const char *>(sendbuf), static_cast<char *>(recvbuf),
                          count, red, root);
    });
}

extern "C" int msg_iallreduce(msg_context_t *context, const void *sendbuf, void *recvbuf,
                              size_t count, int datatype, int op, msg_cq_t *cq, void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    msg::Reduction red;
    if ((rc = context->core->collectives.find_reduction(datatype, op, &red)) != MSG_OK) return rc;
    size_t bytes = 0;
    if ((rc = times(red.element_size(), count, &bytes)) != MSG_OK) return rc;
    if (bytes > 0 && (sendbuf == nullptr || recvbuf == nullptr)) return MSG_ERR_INVALID_ARG;
    return start(context, cq, cookie, MSG_ANY_SOURCE, bytes, [&](Schedule &s) {
        msg::build_allreduce(s, static_cast<const char *>(sendbuf), static_cast<char *>(recvbuf),
                             count, red);
    });
}

extern "C" int msg_igather(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf,
                           int root, msg_cq_t *cq, void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    if ((rc = check_root(context, root)) != MSG_OK) return rc;
    size_t total = 0;
    if ((rc = times(bytes, static_cast<size_t>(job_size(context)), &total)) != MSG_OK) return rc;
    const bool at_root = context->core->info.rank == root;
    if (bytes > 0 && (sendbuf == nullptr || (at_root && recvbuf == nullptr)))
        return MSG_ERR_INVALID_ARG;
    return start(context, cq, cookie, root, at_root ? total : 0, [&](Schedule &s) {
        msg::build_gather(s, static_cast<const char *>(sendbuf), bytes,
                          static_cast<char *>(recvbuf), root);
    });
}

extern "C" int msg_iallgather(msg_context_t *context, const void *sendbuf, size_t bytes,
                              void *recvbuf, msg_cq_t *cq, void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    size_t total = 0;
    if ((rc = times(bytes, static_cast<size_t>(job_size(context)), &total)) != MSG_OK) return rc;
    if (bytes > 0 && (sendbuf == nullptr || recvbuf == nullptr)) return MSG_ERR_INVALID_ARG;
    return start(context, cq, cookie, MSG_ANY_SOURCE, total, [&](Schedule &s) {
        msg::build_allgather(s, static_cast<const char *>(sendbuf), bytes,
                             static_cast<char *>(recvbuf));
    });
}

extern "C" int msg_iscatter(msg_context_t *context, const void *sendbuf, size_t bytes,
                            void *recvbuf, int root, msg_cq_t *cq, void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    if ((rc = check_root(context, root)) != MSG_OK) return rc;
    size_t total = 0;
    if ((rc = times(bytes, static_cast<size_t>(job_size(context)), &total)) != MSG_OK) return rc;
    const bool at_root = context->core->info.rank == root;
    if (bytes > 0 && (recvbuf == nullptr || (at_root && sendbuf == nullptr)))
        return MSG_ERR_INVALID_ARG;
    return start(context, cq, cookie, root, bytes, [&](Schedule &s) {
        msg::build_scatter(s, static_cast<const char *>(sendbuf), bytes,
                           static_cast<char *>(recvbuf), root);
    });
}

extern "C" int msg_ialltoall(msg_context_t *context, const void *sendbuf, size_t bytes,
                             void *recvbuf, msg_cq_t *cq, void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    size_t total = 0;
    if ((rc = times(bytes, static_cast<size_t>(job_size(context)), &total)) != MSG_OK) return rc;
    if (bytes > 0 && (sendbuf == nullptr || recvbuf == nullptr)) return MSG_ERR_INVALID_ARG;
    return start(context, cq, cookie, MSG_ANY_SOURCE, total, [&](Schedule &s) {
        msg::build_alltoall(s, static_cast<const char *>(sendbuf), bytes,
                            static_cast<char *>(recvbuf));
    });
}

namespace {

// alltoallv's arrays: present, and each block inside an addressable range.
int check_counts(const void *buf, const size_t *counts, const size_t *displs, int size,
                 size_t *total) {
    if (counts == nullptr || displs == nullptr) return MSG_ERR_INVALID_ARG;
    *total = 0;
    for (int i = 0; i < size; ++i) {
        const size_t n = counts[i], at = displs[i];
        if (n > 0 && buf == nullptr) return MSG_ERR_INVALID_ARG;
        if (at > std::numeric_limits<size_t>::max() - n) return MSG_ERR_INVALID_ARG;
        *total += n;
    }
    return MSG_OK;
}

}  // namespace

extern "C" int msg_ialltoallv(msg_context_t *context, const void *sendbuf, const size_t *sendcounts,
                              const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                              const size_t *rdispls, msg_cq_t *cq, void *cookie) {
    int rc = msg::check_context_cq(context, cq);
    if (rc != MSG_OK) return rc;
    const int size = job_size(context);
    size_t sent = 0, received = 0;
    if ((rc = check_counts(sendbuf, sendcounts, sdispls, size, &sent)) != MSG_OK) return rc;
    if ((rc = check_counts(recvbuf, recvcounts, rdispls, size, &received)) != MSG_OK) return rc;
    return start(context, cq, cookie, MSG_ANY_SOURCE, received, [&](Schedule &s) {
        msg::build_alltoallv(s, static_cast<const char *>(sendbuf), sendcounts, sdispls,
                             static_cast<char *>(recvbuf), recvcounts, rdispls);
    });
}

// ---- blocking forms ----

extern "C" int msg_bcast(msg_context_t *context, void *buf, size_t bytes, int root) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(
        context, [&](msg_cq_t *cq) { return msg_ibcast(context, buf, bytes, root, cq, nullptr); });
}

extern "C" int msg_reduce(msg_context_t *context, const void *sendbuf, void *recvbuf, size_t count,
                          int datatype, int op, int root) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_ireduce(context, sendbuf, recvbuf, count, datatype, op, root, cq, nullptr);
    });
}

extern "C" int msg_allreduce(msg_context_t *context, const void *sendbuf, void *recvbuf,
                             size_t count, int datatype, int op) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_iallreduce(context, sendbuf, recvbuf, count, datatype, op, cq, nullptr);
    });
}

extern "C" int msg_gather(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf,
                          int root) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_igather(context, sendbuf, bytes, recvbuf, root, cq, nullptr);
    });
}

extern "C" int msg_allgather(msg_context_t *context, const void *sendbuf, size_t bytes,
                             void *recvbuf) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_iallgather(context, sendbuf, bytes, recvbuf, cq, nullptr);
    });
}

extern "C" int msg_scatter(msg_context_t *context, const void *sendbuf, size_t bytes, void *recvbuf,
                           int root) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_iscatter(context, sendbuf, bytes, recvbuf, root, cq, nullptr);
    });
}

extern "C" int msg_alltoall(msg_context_t *context, const void *sendbuf, size_t bytes,
                            void *recvbuf) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_ialltoall(context, sendbuf, bytes, recvbuf, cq, nullptr);
    });
}

extern "C" int msg_alltoallv(msg_context_t *context, const void *sendbuf, const size_t *sendcounts,
                             const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                             const size_t *rdispls) {
    if (context == nullptr) return MSG_ERR_INVALID_ARG;
    return msg::blocking_call(context, [&](msg_cq_t *cq) {
        return msg_ialltoallv(context, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls,
                              cq, nullptr);
    });
}
