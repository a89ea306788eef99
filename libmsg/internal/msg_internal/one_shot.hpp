// A blocking call made of one asynchronous operation and a wait on a private CQ, written
// only against msg.h so that libmsg's own blocking calls, libremoteio's and the tests' share
// it. Part of libmsg for the project's own code (libmsg_dep), never installed.
#pragma once

#include <msg/msg.h>

namespace viaduct {

inline void ignore_completion(const msg_completion_t &) {}

// Calls issue(cq) on a CQ got from acquire(context, &cq), then waits for that one operation,
// gives the CQ to release(cq) and hands the operation's completion to done(completion).
// Returns the first error (acquiring the CQ, issuing, waiting), else the operation's status.
template <typename Acquire, typename Release, typename Issue, typename Done>
int one_shot_with(Acquire &&acquire, Release &&release, msg_context_t *context, Issue &&issue,
                  Done &&done) {
    msg_cq_t *cq = nullptr;
    int rc = acquire(context, &cq);
    if (rc != MSG_OK) return rc;
    msg_completion_t c{};
    rc = issue(cq);
    if (rc == MSG_OK) rc = msg_cq_wait(cq, -1, &c);
    release(cq);
    if (rc != MSG_OK) return rc;
    done(c);
    return c.status;
}

// one_shot_with on a CQ made for the call and destroyed after it.
template <typename Issue, typename Done = void (*)(const msg_completion_t &)>
int one_shot(msg_context_t *context, Issue &&issue, Done &&done = ignore_completion) {
    return one_shot_with(msg_cq_create, msg_cq_destroy, context, issue, done);
}

}  // namespace viaduct
