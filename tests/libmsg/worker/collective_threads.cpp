// Scenario "collective_threads ROUNDS": one thread per rank runs allreduce, allgather, bcast and
// alltoall (blocking and nonblocking, small and long messages) while two other threads exchange
// point-to-point messages (MSG_ANY_SOURCE receives included) with the neighbouring ranks and a
// callback CQ, all on the same context. Checks every result; the point is what ThreadSanitizer
// sees of the collectives' state beside the engine's other users.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "scenarios.hpp"

namespace worker {
// Named: the sanitizer trees compile several scenario files as one (unity builds).
namespace coll_threads {
namespace {

constexpr int kP2pTag = 77;

void collectives_thread(Job &job, size_t rounds) {
    const auto p = static_cast<size_t>(job.size);
    Cq cq(job.ctx());
    for (size_t round = 0; round < rounds; ++round) {
        const size_t n = round % 2 == 0 ? 3 : 40000;  // int64 elements: eager, then long
        std::vector<int64_t> in(n, job.rank + static_cast<int64_t>(round)), out(n);
        WSTATUS(msg_allreduce(job.ctx(), in.data(), out.data(), n, MSG_INT64, MSG_SUM), MSG_OK);
        const int64_t want = static_cast<int64_t>(p * (p - 1) / 2 + p * round);
        for (int64_t v : out) WCHECK(v == want, "allreduce round %zu: %lld", round, (long long)v);
        std::vector<int64_t> all(n * p);
        WSTATUS(msg_iallgather(job.ctx(), in.data(), n * 8, all.data(), cq.get(), &all), MSG_OK);
        std::vector<char> b(n, static_cast<char>(job.rank == 0 ? round : 0));
        WSTATUS(msg_ibcast(job.ctx(), b.data(), n, 0, cq.get(), &b), MSG_OK);
        std::vector<char> to(n * p, static_cast<char>(job.rank)), from(n * p);
        WSTATUS(msg_ialltoall(job.ctx(), to.data(), n, from.data(), cq.get(), &to), MSG_OK);
        for (int i = 0; i < 3; ++i) {
            const msg_completion_t c = wait_completion(cq.get(), "a nonblocking collective");
            WCHECK(c.status == MSG_OK, "round %zu: %s", round, describe(c).c_str());
        }
        for (size_t r = 0; r < p; ++r) {
            WCHECK(all[r * n] == static_cast<int64_t>(r + round), "allgather block %zu", r);
            WCHECK(from[r * n] == static_cast<char>(r), "alltoall block %zu", r);
        }
        WCHECK(b[n - 1] == static_cast<char>(round), "bcast round %zu", round);
    }
    cq.destroy();
}

struct Counter {
    std::atomic<size_t> n{0};
};

void count_completion(void *arg, const msg_completion_t *c) {
    if (c->status == MSG_OK) ++static_cast<Counter *>(arg)->n;
}

// Sends `count` messages to the right neighbour and takes as many from the left one (with
// source wildcards on odd threads), completions on a callback CQ.
void p2p_thread(Job &job, int thread, size_t count) {
    const int right = (job.rank + 1) % job.size, left = (job.rank + job.size - 1) % job.size;
    Counter done;
    msg_cq_t *cq = nullptr;
    WSTATUS(msg_cq_create_callback(job.ctx(), count_completion, &done, &cq), MSG_OK);
    std::vector<char> out(20000, 'x'), in(count * 20000);
    const int tag = kP2pTag + thread;
    for (size_t i = 0; i < count; ++i) {
        const size_t len = i % 2 == 0 ? 16 : out.size();
        WSTATUS(msg_irecv(job.ctx(), thread % 2 ? MSG_ANY_SOURCE : left, tag,
                          in.data() + i * out.size(), out.size(), cq, nullptr),
                MSG_OK);
        WSTATUS(msg_isend(job.ctx(), right, tag, out.data(), len, cq, nullptr), MSG_OK);
    }
    const double until = now_seconds() + completion_timeout_ms() / 1000.0;
    while (done.n < 2 * count) {
        WCHECK(now_seconds() < until, "point-to-point thread %d: %zu of %zu done", thread,
               done.n.load(), 2 * count);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    WSTATUS(msg_cq_destroy(cq), MSG_OK);
}

}  // namespace
}  // namespace coll_threads

void run_collective_threads(const Args &args) {
    using namespace coll_threads;
    const size_t rounds = scaled(parse_size_arg(args, 0, 20), 4);
    Job job;
    WCHECK(job.size >= 2, "needs 2 ranks or more");
    std::thread a([&] { p2p_thread(job, 0, rounds * 4); });
    std::thread w([&] { p2p_thread(job, 1, rounds * 4); });
    collectives_thread(job, rounds);
    a.join();
    w.join();
    job.finalize();
}

}  // namespace worker
