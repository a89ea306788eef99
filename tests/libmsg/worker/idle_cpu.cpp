// Scenario "idle_cpu": a thread blocked in msg_cq_wait with a live peer and nothing arriving
// must not burn CPU. Measured over the whole process (every thread, the library's included).
#include <sys/resource.h>

#include <cstdlib>

#include "scenarios.hpp"

namespace worker {
namespace {

double process_cpu_seconds() {
    rusage usage{};
    WCHECK(getrusage(RUSAGE_SELF, &usage) == 0, "getrusage failed");
    auto seconds = [](const timeval &tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

void run_idle_cpu(const Args &args) {
    const int wait_seconds = static_cast<int>(parse_size_arg(args, 0, 5));
    const double max_percent = args.size() > 1 ? std::atof(args[1].c_str()) : 2.0;
    constexpr int kTag = 1;
    Job job;
    WCHECK(job.size == 2, "the idle_cpu scenario needs 2 ranks, got %d", job.size);
    const int peer = 1 - job.rank;
    Cq cq(job.ctx());
    char in = 0, out = 'k';
    WSTATUS(msg_irecv(job.ctx(), peer, kTag, &in, 1, cq.get(), nullptr), MSG_OK);
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);

    const double cpu_before = process_cpu_seconds();
    const double wall_before = now_seconds();
    msg_completion_t c{};
    const int rc = msg_cq_wait(cq.get(), wait_seconds * 1000, &c);
    const double wall = now_seconds() - wall_before;
    const double cpu = process_cpu_seconds() - cpu_before;
    const double percent = 100.0 * cpu / wall;
    say("idle_cpu: msg_cq_wait(%d ms) returned %d after %.3f s using %.1f ms CPU (%.2f%% of a "
        "core)",
        wait_seconds * 1000, rc, wall, cpu * 1000, percent);

    WCHECK(rc == MSG_ERR_TIMEOUT, "msg_cq_wait with nothing arriving returned %d (%s)", rc,
           msg_strerror(rc));
    WCHECK(wall >= wait_seconds - 0.01, "msg_cq_wait(%d s) returned after %.3f s", wait_seconds,
           wall);
    WCHECK(wall <= wait_seconds + 1.0 * slowdown(), "msg_cq_wait(%d s) returned after %.3f s",
           wait_seconds, wall);
    WCHECK(percent < max_percent, "process used %.2f%% of a core while idle (limit %.1f%%)",
           percent, max_percent);

    // The peer was there all along: the pending receive still completes.
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    WSTATUS(msg_send(job.ctx(), peer, kTag, &out, 1), MSG_OK);
    c = wait_completion(cq.get(), "receive posted before the idle wait");
    WCHECK(c.status == MSG_OK && c.bytes == 1 && in == 'k', "late receive: %s",
           describe(c).c_str());
    cq.destroy();
    job.finalize();
}

}  // namespace worker
