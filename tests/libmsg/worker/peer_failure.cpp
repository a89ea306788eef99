// Scenario "peer_failure": the last rank dies (SIGKILL or _exit) while the others have a receive
// posted from it and a long send in flight to it — either waiting for a receive that never
// comes, or ("kill_busy") part-way through a large transfer the dying rank is receiving. The
// survivors must see the failure within the configured timeout, keep working with each other,
// and shut down cleanly.
#include <signal.h>
#include <unistd.h>

#include <cinttypes>
#include <cstring>
#include <memory>

#include "pattern.hpp"
#include "scenarios.hpp"

namespace worker {
namespace {

constexpr int kRecvTag = 5;
constexpr int kSendTag = 6;
constexpr int kSurvivorTag = 8;

// Time allowed beyond VIADUCT_TIMEOUT_MS for noticing the death and failing the operations.
double detection_bound_seconds() {
    const char *v = std::getenv("VIADUCT_TIMEOUT_MS");
    const double timeout_s = (v != nullptr ? std::atof(v) : 10000.0) / 1000.0;
    return 2.0 * timeout_s + 2.0 * slowdown();
}

// An operation on the dead rank fails either when issued or through its completion.
void expect_fails_on_dead(msg_cq_t *cq, int rc, const char *what, double bound) {
    if (rc == MSG_ERR_PEER_FAILED) return;
    WCHECK(rc == MSG_OK, "%s to the dead rank returned %d (%s)", what, rc, msg_strerror(rc));
    msg_completion_t c{};
    rc = msg_cq_wait(cq, static_cast<int>(bound * 1000), &c);
    WCHECK(rc == MSG_OK, "%s to the dead rank never completed: %d (%s)", what, rc,
           msg_strerror(rc));
    WCHECK(c.status == MSG_ERR_PEER_FAILED, "%s to the dead rank completed as %s", what,
           describe(c).c_str());
}

void die(const std::string &how) {
    if (how == "exit") _exit(3);
    raise(SIGKILL);
}

// Long enough that the dying rank is still receiving it when it dies.
size_t busy_size() {
    return size_t{256} << 20;
}

// Waits for the receive from and the send to the dead rank, each to fail (or the send, when busy,
// to have finished just before the rank died) within the detection bound.
void await_failed_pair(Cq &cq, int dead, bool busy, double bound, const int *recv_cookie,
                       const int *send_cookie) {
    bool recv_done = false, send_done = false;
    for (int i = 0; i < 2; ++i) {
        msg_completion_t c{};
        int rc = msg_cq_wait(cq.get(), static_cast<int>(bound * 1000), &c);
        WCHECK(rc == MSG_OK,
               "no completion within %.1f s of rank %d dying (%s still pending): %d (%s)", bound,
               dead, !recv_done ? "the receive" : "the send", rc, msg_strerror(rc));
        // A transfer that the dead rank had matched may have finished just before it died.
        const bool may_succeed = busy && c.cookie == send_cookie;
        WCHECK(c.status == MSG_ERR_PEER_FAILED || (may_succeed && c.status == MSG_OK),
               "operation on the dead rank completed as %s", describe(c).c_str());
        WCHECK(c.source == dead, "failed operation reports peer %d, not %d: %s", c.source, dead,
               describe(c).c_str());
        if (c.cookie == recv_cookie) {
            WCHECK(!recv_done && c.op == MSG_OP_RECV, "receive from the dead rank: %s",
                   describe(c).c_str());
            recv_done = true;
        } else {
            WCHECK(!send_done && c.cookie == send_cookie && c.op == MSG_OP_SEND,
                   "send to the dead rank: %s", describe(c).c_str());
            send_done = true;
        }
    }
}

// Every pair of surviving ranks still exchanges an eager and a long message.
void exchange_among_survivors(Job &job, Cq &cq, int dead, double bound) {
    for (int peer = 0; peer < dead; ++peer) {
        if (peer == job.rank) continue;
        for (size_t size : {size_t{64}, 16 * job.info.buffer_size + 1}) {
            Buffer mine(size), theirs(size);
            make_message(mine.get(), size, job.rank, kSurvivorTag, size);
            WSTATUS(msg_irecv(job.ctx(), peer, kSurvivorTag, theirs.get(), size, cq.get(), &theirs),
                    MSG_OK);
            WSTATUS(msg_isend(job.ctx(), peer, kSurvivorTag, mine.get(), size, cq.get(), &mine),
                    MSG_OK);
            for (int i = 0; i < 2; ++i) {
                msg_completion_t c{};
                const int rc = msg_cq_wait(cq.get(), static_cast<int>(bound * 1000), &c);
                WCHECK(
                    rc == MSG_OK,
                    "survivor exchange of %zu B with rank %d: nothing completed in %.1f s: %d (%s)",
                    size, peer, bound, rc, msg_strerror(rc));
                WCHECK(c.status == MSG_OK && c.bytes == size, "survivor exchange with %d: %s", peer,
                       describe(c).c_str());
            }
            std::string wrong = check_message(theirs.get(), size, peer, kSurvivorTag, size);
            WCHECK(wrong.empty(), "survivor exchange with %d: %s", peer, wrong.c_str());
        }
    }
}

void survive(Job &job, int dead, bool busy) {
    // Either more than the credits can absorb without a matching receive, or a transfer that
    // takes a while.
    const size_t long_size = busy ? busy_size() : 16 * job.info.buffer_size + 1;
    const double bound = detection_bound_seconds();
    Cq cq(job.ctx());
    Buffer in(job.info.eager_max), out(long_size);
    make_message(out.get(), long_size, job.rank, kSendTag, 0);
    int recv_cookie = 0, send_cookie = 0;
    WSTATUS(msg_irecv(job.ctx(), dead, kRecvTag, in.get(), in.size, cq.get(), &recv_cookie),
            MSG_OK);
    // Busy: the doomed rank's receives are posted before the long sends go, so each finds its
    // receive waiting and the transfer starts at once.
    if (busy) WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    WSTATUS(msg_isend(job.ctx(), dead, kSendTag, out.get(), long_size, cq.get(), &send_cookie),
            MSG_OK);
    // Both operations are posted before the doomed rank leaves the barrier.
    {
        Watchdog watchdog(completion_timeout_ms() / 1000.0, "the barrier before the failure");
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    }
    const double start = now_seconds();

    await_failed_pair(cq, dead, busy, bound, &recv_cookie, &send_cookie);
    const double detected = now_seconds() - start;
    say("SURVIVOR detected failure of rank %d after %.3f s (bound %.1f s)", dead, detected, bound);
    WCHECK(detected <= bound, "failure noticed after %.3f s, bound %.1f s", detected, bound);

    // From here on no call may hang, including calls that should return at once (a provider
    // lock left held by the dead rank would make msg_isend itself block).
    Watchdog stuck(4 * bound, "the survivors' calls after the failure");

    // New operations naming the dead rank fail too, without waiting for another timeout.
    char byte = 1;
    expect_fails_on_dead(cq.get(),
                         msg_isend(job.ctx(), dead, kRecvTag, &byte, 1, cq.get(), nullptr),
                         "a new isend", bound);
    expect_fails_on_dead(cq.get(),
                         msg_irecv(job.ctx(), dead, kRecvTag, &byte, 1, cq.get(), nullptr),
                         "a new irecv", bound);
    {
        Watchdog watchdog(bound, "a blocking msg_send to the dead rank");
        WSTATUS(msg_send(job.ctx(), dead, kRecvTag, &byte, 1), MSG_ERR_PEER_FAILED);
    }

    // The survivors still talk to each other, eager and long.
    exchange_among_survivors(job, cq, dead, bound);
    msg_stats_t stats{};
    WSTATUS(msg_get_stats(job.ctx(), &stats), MSG_OK);
    WCHECK(stats.peers_failed >= 1, "stats report %" PRIu64 " failed peers", stats.peers_failed);
    cq.destroy();

    // Barrier and finalize wait only for live ranks; either may say a rank was lost, but both
    // must return within the bound.
    double t = now_seconds();
    Watchdog watchdog(bound, "msg_barrier and msg_finalize among the survivors");
    int rc = msg_barrier(job.ctx());
    WCHECK(rc == MSG_OK || rc == MSG_ERR_PEER_FAILED, "barrier among survivors: %d (%s)", rc,
           msg_strerror(rc));
    rc = msg_finalize(job.ctx());
    WCHECK(rc == MSG_OK || rc == MSG_ERR_PEER_FAILED, "finalize among survivors: %d (%s)", rc,
           msg_strerror(rc));
    WCHECK(now_seconds() - t <= bound, "barrier and finalize took %.3f s", now_seconds() - t);
    say("SURVIVOR_OK");
}

}  // namespace

void run_peer_failure(const Args &args) {
    const std::string how = args.empty() ? "kill" : args[0];
    WCHECK(how == "kill" || how == "exit" || how == "kill_busy",
           "peer_failure takes kill, exit or kill_busy, not '%s'", how.c_str());
    const bool busy = how == "kill_busy";
    Job job;
    WCHECK(job.size >= 3, "the peer_failure scenario needs at least 3 ranks, got %d", job.size);
    const int dead = job.size - 1;
    if (job.rank == dead) {
        // A new context, and the survivors' long sends are the only messages sent to it: its
        // counts start at zero.
        const msg_stats_t before{};
        std::vector<std::unique_ptr<Buffer>> sinks;
        Cq cq(job.ctx());
        if (busy) {
            for (int r = 0; r < dead; ++r) {
                sinks.push_back(std::make_unique<Buffer>(busy_size()));
                WSTATUS(msg_irecv(job.ctx(), r, kSendTag, sinks.back()->get(), busy_size(),
                                  cq.get(), nullptr),
                        MSG_OK);
            }
            WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        }
        WSTATUS(msg_barrier(job.ctx()), MSG_OK);
        // Every survivor's long send has arrived, so it is truly in flight when this rank dies:
        // idle, its request to send waits unexpected here; busy, a posted receive has taken it
        // and the large transfer has begun.
        const uint64_t survivors = static_cast<uint64_t>(dead);
        wait_for_stat(job,
                      busy ? &msg_stats_t::expected_messages : &msg_stats_t::unexpected_messages,
                      (busy ? before.expected_messages : before.unexpected_messages) + survivors,
                      "the survivors' long sends arriving");
        check_arrivals(before, get_stats(job), busy ? 0 : survivors, busy ? survivors : 0,
                       busy ? "busy: the survivors' sends" : "idle: the survivors' sends");
        say("dying by %s", how.c_str());
        die(how);
    }
    survive(job, dead, busy);
}

}  // namespace worker
