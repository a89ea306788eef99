// Scenario "collective_failure NAME DELAY_MS ROOT": every rank starts collective NAME (1 MiB + 3
// bytes or elements, root 0 or the last rank) on a CQ; the last rank then SIGKILLs itself after
// DELAY_MS. Every survivor must see the collective complete within the detection bound, with
// MSG_ERR_PEER_FAILED or, if its part was done before the death, MSG_OK and the right data;
// a collective started afterwards must fail with MSG_ERR_PEER_FAILED; the survivors must still
// exchange messages among themselves and finalize.
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "scenarios.hpp"

namespace worker {
// Named: the sanitizer trees compile several scenario files as one (unity builds).
namespace coll_failure {
namespace {

constexpr size_t kBytes = (size_t{1} << 20) + 3;
constexpr size_t kCount = (size_t{1} << 20) + 3;  // int32 elements of reduce and allreduce

unsigned char byte_of(int from, int to, size_t i) {
    return static_cast<unsigned char>(from * 37 + to * 11 + i * 7);
}

double detection_bound_seconds() {
    const char *v = std::getenv("VIADUCT_TIMEOUT_MS");
    const double timeout_s = (v != nullptr ? std::atof(v) : 10000.0) / 1000.0;
    return 2.0 * timeout_s + 2.0 * slowdown();
}

struct Buffers {
    std::vector<unsigned char> out, in;
    std::vector<int32_t> vin, vout;
    std::vector<size_t> counts, displs;
};

void fill(Job &job, Buffers &b, const std::string &name, int root) {
    const auto p = static_cast<size_t>(job.size);
    const bool many = name == "gather" || name == "allgather" || name == "alltoall" ||
                      name == "alltoallv" || name == "scatter";
    b.out.resize(many ? p * kBytes : kBytes);
    b.in.assign(many ? p * kBytes : kBytes, 0);
    for (size_t j = 0; j < b.out.size(); ++j) {
        const int to = name == "bcast" ? 0 : many ? static_cast<int>(j / kBytes) : root;
        const int from = name == "bcast" ? root : job.rank;
        b.out[j] = byte_of(from, to, j % kBytes);
    }
    if (name == "bcast" && job.rank != root) b.out.assign(kBytes, 0);
    b.vin.assign(kCount, job.rank + 1);
    b.vout.assign(kCount, 0);
    b.counts.assign(p, kBytes);
    b.displs.resize(p);
    for (size_t j = 0; j < p; ++j) b.displs[j] = j * kBytes;
}

int issue(Job &job, Buffers &b, const std::string &name, int root, msg_cq_t *cq) {
    msg_context_t *ctx = job.ctx();
    if (name == "bcast") return msg_ibcast(ctx, b.out.data(), kBytes, root, cq, nullptr);
    if (name == "reduce")
        return msg_ireduce(ctx, b.vin.data(), b.vout.data(), kCount, MSG_INT32, MSG_SUM, root, cq,
                           nullptr);
    if (name == "allreduce")
        return msg_iallreduce(ctx, b.vin.data(), b.vout.data(), kCount, MSG_INT32, MSG_SUM, cq,
                              nullptr);
    if (name == "gather")
        return msg_igather(ctx, b.out.data(), kBytes, b.in.data(), root, cq, nullptr);
    if (name == "allgather")
        return msg_iallgather(ctx, b.out.data(), kBytes, b.in.data(), cq, nullptr);
    if (name == "scatter")
        return msg_iscatter(ctx, b.out.data(), kBytes, b.in.data(), root, cq, nullptr);
    if (name == "alltoall")
        return msg_ialltoall(ctx, b.out.data(), kBytes, b.in.data(), cq, nullptr);
    if (name == "alltoallv")
        return msg_ialltoallv(ctx, b.out.data(), b.counts.data(), b.displs.data(), b.in.data(),
                              b.counts.data(), b.displs.data(), cq, nullptr);
    fail_at(__FILE__, __LINE__, "name", "unknown collective %s", name.c_str());
}

// A survivor whose collective completed MSG_OK must hold the right result.
void verify(Job &job, const Buffers &b, const std::string &name, int root) {
    const int p = job.size, r = job.rank;
    if (name == "reduce" || name == "allreduce") {
        if (name == "reduce" && r != root) return;
        const int32_t want = p * (p + 1) / 2;
        for (size_t i = 0; i < kCount; ++i)
            WCHECK(b.vout[i] == want, "%s succeeded with element %zu = %d, not %d", name.c_str(), i,
                   b.vout[i], want);
        return;
    }
    for (size_t j = 0; j < (name == "bcast" || name == "scatter" ? kBytes : b.in.size()); ++j) {
        const size_t blk = j / kBytes;
        unsigned char want = 0;
        if (name == "bcast")
            want = byte_of(root, 0, j);
        else if (name == "scatter")
            want = byte_of(root, r, j);
        else if (name == "gather" || name == "allgather")
            // Each rank sends the first block of its buffer, made for rank 0.
            want = byte_of(static_cast<int>(blk), 0, j % kBytes);
        else
            want = byte_of(static_cast<int>(blk), r, j % kBytes);
        if (name == "gather" && r != root) return;
        const unsigned char got = name == "bcast" ? b.out[j] : b.in[j];
        WCHECK(got == want, "%s succeeded with byte %zu wrong", name.c_str(), j);
    }
}

// The survivors still reach each other: a ring of sends among ranks 0 .. size-2.
void survivors_exchange(Job &job, double bound) {
    const int alive = job.size - 1;
    if (alive < 2) return;
    Cq cq(job.ctx());
    int token = job.rank, got = -1;
    const int right = (job.rank + 1) % alive, left = (job.rank + alive - 1) % alive;
    WSTATUS(msg_irecv(job.ctx(), left, 9, &got, sizeof got, cq.get(), &got), MSG_OK);
    WSTATUS(msg_isend(job.ctx(), right, 9, &token, sizeof token, cq.get(), &token), MSG_OK);
    for (int i = 0; i < 2; ++i) {
        msg_completion_t c{};
        WSTATUS(msg_cq_wait(cq.get(), static_cast<int>(bound * 1000), &c), MSG_OK);
        WCHECK(c.status == MSG_OK, "survivor exchange: %s", describe(c).c_str());
    }
    WCHECK(got == left, "survivor exchange: got %d from %d", got, left);
}

// issued: what starting the collective returned (MSG_ERR_PEER_FAILED: the death was known
// already, so it was refused at once).
void survive(Job &job, Buffers &b, const std::string &name, int root, msg_cq_t *cq, int issued) {
    const double bound = detection_bound_seconds();
    const double start = now_seconds();
    msg_completion_t c{};
    c.op = MSG_OP_COLLECTIVE;
    c.status = issued;
    const int rc = issued == MSG_OK ? msg_cq_wait(cq, static_cast<int>(bound * 1000), &c) : MSG_OK;
    WCHECK(rc == MSG_OK, "%s: no completion within %.1f s of the death: %d (%s)", name.c_str(),
           bound, rc, msg_strerror(rc));
    WCHECK(c.op == MSG_OP_COLLECTIVE, "%s: %s", name.c_str(), describe(c).c_str());
    WCHECK(c.status == MSG_ERR_PEER_FAILED || c.status == MSG_OK, "%s completed as %s",
           name.c_str(), describe(c).c_str());
    if (c.status == MSG_OK) verify(job, b, name, root);
    say("SURVIVOR %s: %s after %.2f s", name.c_str(), msg_strerror(c.status),
        now_seconds() - start);
    {
        // Started after the failure (known by now, or soon): refused, or failed, in bounded time.
        Watchdog watchdog(bound, "a collective after the failure");
        int32_t x = 1, y = 0;
        WSTATUS(msg_allreduce(job.ctx(), &x, &y, 1, MSG_INT32, MSG_SUM), MSG_ERR_PEER_FAILED);
    }
    survivors_exchange(job, bound);
    say("SURVIVOR_OK");
}

}  // namespace
}  // namespace coll_failure

void run_collective_failure(const Args &args) {
    using namespace coll_failure;
    WCHECK(args.size() == 3, "usage: collective_failure NAME DELAY_MS first|victim");
    const std::string name = args[0];
    const int delay_ms = std::atoi(args[1].c_str());
    Job job;
    WCHECK(job.size >= 3, "needs 3 ranks or more");
    const int victim = job.size - 1;
    const int root = args[2] == "victim" ? victim : 0;
    int32_t one = 1, sum = 0;
    WSTATUS(msg_allreduce(job.ctx(), &one, &sum, 1, MSG_INT32, MSG_SUM), MSG_OK);
    WCHECK(sum == job.size, "warm-up allreduce: %d", sum);
    Buffers b;
    fill(job, b, name, root);
    Cq cq(job.ctx());
    const int issued = issue(job, b, name, root, cq.get());
    WCHECK(issued == MSG_OK || (issued == MSG_ERR_PEER_FAILED && job.rank != victim),
           "starting %s: %d (%s)", name.c_str(), issued, msg_strerror(issued));
    if (job.rank == victim) {
        msg_completion_t c{};
        if (delay_ms > 0) (void)msg_cq_wait(cq.get(), delay_ms, &c);
        raise(SIGKILL);
    }
    survive(job, b, name, root, cq.get(), issued);
    cq.destroy();
    job.finalize_after_loss();
}

}  // namespace worker
