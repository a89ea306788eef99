// msg_probe and msg_iprobe: the first unexpected message a receive would take,
// looked at without receiving it. A blocked prober sleeps on the core's
// probe_cv; whoever moves the engine wakes it (progress.cpp).
#include "api/core.hpp"
#include "common/log.hpp"

namespace {

// One look: a progress pass (so what has arrived is seen), then the engine's
// unexpected list.
int look(msg::Core &core, int source, int tag, msg_completion_t *out) {
    std::unique_lock<msg::TimedMutex> lk;
    if (!core.lock(lk)) return MSG_ERR_TRANSPORT;
    if (core.finalized || !core.engine) return MSG_ERR_FINALIZED;
    core.progress_locked();
    return core.engine->probe(source, tag, out);
}

int check_probe(msg_context_t *context, int source, int tag, msg_completion_t *out) {
    if (context == nullptr || out == nullptr) return MSG_ERR_INVALID_ARG;
    if (context->core->finalized) return MSG_ERR_FINALIZED;
    if (int rc = context->core->check_rank(source, true, "probe: "); rc != MSG_OK) return rc;
    if (tag < 0 && tag != MSG_ANY_TAG) return MSG_ERR_INVALID_ARG;
    if (tag >= MSG_TAG_RESERVED_FIRST) return MSG_ERR_RESERVED_TAG;
    return MSG_OK;
}

}  // namespace

extern "C" int msg_iprobe(msg_context_t *context, int source, int tag, int *flag,
                          msg_completion_t *completion) {
    if (flag == nullptr) return MSG_ERR_INVALID_ARG;
    *flag = 0;
    int rc = check_probe(context, source, tag, completion);
    if (rc != MSG_OK) return rc;
    rc = look(*context->core, source, tag, completion);
    if (rc == MSG_ERR_TIMEOUT) return MSG_OK;
    if (rc == MSG_OK) *flag = 1;
    return rc;
}

extern "C" int msg_probe(msg_context_t *context, int source, int tag, int timeout_ms,
                         msg_completion_t *completion) {
    using clock = msg::Core::clock;
    int rc = check_probe(context, source, tag, completion);
    if (rc != MSG_OK) return rc;
    msg::Core &core = *context->core;
    const auto deadline = timeout_ms < 0 ? clock::time_point::max()
                                         : clock::now() + std::chrono::milliseconds(timeout_ms);
    ++core.probers;
    for (;;) {
        // Read before looking: any move after the look changes it.
        const uint64_t seen = core.probe_gen.load();
        rc = look(core, source, tag, completion);
        if (rc != MSG_ERR_TIMEOUT || clock::now() >= deadline) break;
        // Sleep until the engine has moved; in short slices, since a peer's
        // failure or a finalize may come without a progress pass.
        std::unique_lock<std::mutex> lk(core.probe_mu);
        auto until = std::min(deadline, clock::now() + std::chrono::milliseconds(10));
        core.probe_cv.wait_until(lk, until, [&] {
            return core.finalized.load() || core.wedged.load() || core.probe_gen.load() != seen;
        });
    }
    --core.probers;
    return rc;
}
