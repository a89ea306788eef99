// Scenario "api_errors": argument checks that need a peer — a CQ with operations in flight
// refuses destruction, ranks past the job are unknown, and the largest tag is a valid tag.
#include <climits>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

// A CQ with a pending receive, then a pending long send, is busy until they complete.
void cq_destroy_while_busy(Job &job) {
    const int peer = 1 - job.rank;
    const size_t long_size = 16 * job.info.buffer_size + 3;
    msg_cq_t *cq = nullptr;
    WSTATUS(msg_cq_create(job.ctx(), &cq), MSG_OK);
    if (job.rank == 0) {
        char byte = 0;
        WSTATUS(msg_irecv(job.ctx(), peer, 10, &byte, 1, cq, nullptr), MSG_OK);
        WSTATUS(msg_cq_destroy(cq), MSG_ERR_BUSY);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);  // the peer sends only now
        msg_completion_t c = wait_completion(cq, "receive that kept the CQ busy");
        WCHECK(c.status == MSG_OK && byte == 'b', "receive after MSG_ERR_BUSY: %s",
               describe(c).c_str());

        Buffer out(long_size);
        make_message(out.get(), long_size, 0, 11, 0);
        WSTATUS(msg_isend(job.ctx(), peer, 11, out.get(), long_size, cq, nullptr), MSG_OK);
        WSTATUS(msg_cq_destroy(cq), MSG_ERR_BUSY);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);  // the peer receives only now
        c = wait_completion(cq, "long send that kept the CQ busy");
        WCHECK(c.status == MSG_OK && c.bytes == long_size, "long send after MSG_ERR_BUSY: %s",
               describe(c).c_str());
    } else {
        char byte = 'b';
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        WSTATUS(msg_send(job.ctx(), peer, 10, &byte, 1), MSG_OK);
        Buffer in(long_size);
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        WSTATUS(msg_recv(job.ctx(), peer, 11, in.get(), long_size, nullptr), MSG_OK);
        std::string wrong = check_message(in.get(), long_size, 0, 11, 0);
        WCHECK(wrong.empty(), "long message that kept the CQ busy: %s", wrong.c_str());
    }
    WSTATUS(msg_cq_destroy(cq), MSG_OK);
}

void unknown_ranks(Job &job) {
    char byte = 0;
    Cq cq(job.ctx());
    for (int rank : {job.size, job.size + 1, 1000, INT_MAX, -2, INT_MIN}) {
        WSTATUS(msg_send(job.ctx(), rank, 0, &byte, 1), MSG_ERR_UNKNOWN_RANK);
        WSTATUS(msg_isend(job.ctx(), rank, 0, &byte, 1, cq.get(), nullptr), MSG_ERR_UNKNOWN_RANK);
        WSTATUS(msg_irecv(job.ctx(), rank, 0, &byte, 1, cq.get(), nullptr), MSG_ERR_UNKNOWN_RANK);
        WSTATUS(msg_recv(job.ctx(), rank, 0, &byte, 1, nullptr), MSG_ERR_UNKNOWN_RANK);
    }
    // MSG_ANY_SOURCE is not a destination; either refusal is fair, success is not.
    int rc = msg_send(job.ctx(), MSG_ANY_SOURCE, 0, &byte, 1);
    WCHECK(rc == MSG_ERR_UNKNOWN_RANK || rc == MSG_ERR_INVALID_ARG,
           "send to MSG_ANY_SOURCE returned %d (%s)", rc, msg_strerror(rc));
    msg_completion_t extra{};
    WSTATUS(msg_cq_wait(cq.get(), 0, &extra), MSG_ERR_TIMEOUT);  // refused calls post nothing
    cq.destroy();
}

// Tags 0 and MSG_TAG_USER_MAX are both valid, and ANY_TAG reports MSG_TAG_USER_MAX faithfully.
void extreme_tags(Job &job) {
    const int peer = 1 - job.rank;
    for (int tag : {0, MSG_TAG_USER_MAX}) {
        for (bool wildcard : {false, true}) {
            if (job.rank == 0) {
                char out[40];
                make_message(out, sizeof out, 0, tag, wildcard);
                WSTATUS(msg_send(job.ctx(), peer, tag, out, sizeof out), MSG_OK);
            } else {
                char in[40];
                msg_completion_t c{};
                WSTATUS(msg_recv(job.ctx(), peer, wildcard ? MSG_ANY_TAG : tag, in, sizeof in, &c),
                        MSG_OK);
                WCHECK(c.tag == tag && c.source == peer && c.bytes == sizeof in,
                       "tag %d (%s receive): %s", tag, wildcard ? "ANY_TAG" : "exact",
                       describe(c).c_str());
                std::string wrong = check_message(in, sizeof in, 0, tag, wildcard);
                WCHECK(wrong.empty(), "tag %d: %s", tag, wrong.c_str());
            }
        }
    }
}

}  // namespace

void run_api_errors(const Args &) {
    Job job;
    WCHECK(job.size == 2, "the api_errors scenario needs 2 ranks, got %d", job.size);
    cq_destroy_while_busy(job);
    unknown_ranks(job);
    extreme_tags(job);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace worker
