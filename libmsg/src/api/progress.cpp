// Moving the fabric forward: the progress thread that drives it while
// application threads sleep, and the policy by which a waiting application
// thread polls it first.
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "api/core.hpp"
#include "common/log.hpp"

namespace msg {

namespace {

// CPUs this process may run on (its affinity mask, which cgroup cpusets and
// taskset narrow), at least 1.
int usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

WaitPolicy choose_wait_policy(int spin_us, int ranks, int cpus) {
    WaitPolicy w;
    if (cpus <= 0) cpus = usable_cpus();
    w.yield = ranks > cpus;
    w.spin_us = spin_us == MSG_SPIN_AUTO ? 200 : spin_us;
    log_debug(
        "%d ranks here may run on this rank's CPUs, %d CPUs between them: waiters poll %d us%s",
        ranks, cpus, w.spin_us, w.yield ? ", yielding between polls" : "");
    return w;
}

bool Core::poll_as_waiter(clock::time_point *start, bool just_look,
                          const std::function<bool()> &take) {
    ++spinners;
    // The clock is read every kPollsPerClock polls, not every one: in a virtual machine a
    // read costs as much as a poll that finds nothing (17 % of an 8-byte ping-pong's time).
    // The wait's start is the first read, so a wait answered within its first polls reads
    // none; but a poller that yields reads it at once, as its polls may each take a while.
    constexpr unsigned kPollsPerClock = 16;
    bool timed = false;
    clock::time_point until;
    auto start_clock = [&](clock::time_point now) {
        *start = now;
        until = now + std::chrono::microseconds(wait.spin_us);
        timed = true;
    };
    if (wait.yield) start_clock(clock::now());
    for (unsigned polls = 1;; ++polls) {
        try_progress();
        if (take()) {
            --spinners;
            return true;
        }
        if (just_look || finalized) break;
        if (polls % kPollsPerClock == 0 || wait.spin_us == 0) {
            const clock::time_point now = clock::now();
            if (!timed)
                start_clock(now);
            else if (now >= until)
                break;
        }
        // On an oversubscribed host, hand the core to any runnable thread
        // between polls: it is likely the one we wait for.
        if (wait.yield)
            sched_yield();
        else
            __builtin_ia32_pause();
    }
    if (--spinners == 0) wake_progress();
    if (!timed) *start = clock::now();
    return false;
}

bool Core::try_progress() {
    std::unique_lock<msg::TimedMutex> lk(mu, std::try_to_lock);
    if (!lk.owns_lock() || !engine) return false;
    const bool moved = progress_locked();
    if (moved) notify_probers();
    return moved;
}

bool Core::progress_locked() {
    const bool moved = engine->progress();
    collectives.run();
    return moved;
}

void Core::notify_probers() {
    if (probers.load() == 0) return;
    std::lock_guard<std::mutex> lk(probe_mu);
    ++probe_gen;
    probe_cv.notify_all();
}

void Core::start_progress_thread() {
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    progress = std::thread([this] { progress_loop(); });
}

void Core::stop_progress_thread() {
    if (!progress.joinable()) return;
    stop = true;
    wake_progress();
    if (wedged)
        progress.detach();
    else
        progress.join();
}

void Core::wake_progress() {
    if (wake_fd < 0) return;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
}

// Drives the fabric while application threads sleep. While an application
// thread polls in a wait, it only naps (that thread does the work); it takes
// over within 16 ms of the last such thread leaving. It never
// spins: on a machine with few cores a spinning progress thread delays the
// wake-up of the very thread it just completed work for. It blocks on the
// transport's fd (libfabric's CQ fd, or the shm doorbell), or without one
// backs off from 20 us to 1 ms between polls, so an idle process costs well
// under 1% of a core.
// A thread waiting for the fabric lock while this one keeps taking it (a
// large message moving in many passes) gets its turn: the mutex is not fair,
// and a waiter kept out for timeout_ms would declare the fabric wedged.
void Core::step_aside() {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
    while (mu.waiters() > 0 && std::chrono::steady_clock::now() < until) sched_yield();
}

void Core::progress_loop() {
    int idle_us = 0;
    while (!stop) {
        int fd = -1, timeout_ms = 0;
        bool blocking = false;
        if (spinners.load() > 0) {
            // A thread that leaves its wait for lack of a completion wakes us;
            // one that leaves with a completion does not (it is usually back
            // within microseconds), so we look again after a nap. Each look
            // preempts a spinning thread: 1 ms naps cost a busy two-core host
            // a tenth of its all-to-all bandwidth (20% on tcp at P = 4).
            timeout_ms = 16;
        } else {
            {
                std::unique_lock<msg::TimedMutex> lk(mu);
                if (progress_locked()) {
                    idle_us = 0;
                    lk.unlock();
                    notify_probers();
                    step_aside();
                    continue;
                }
                // libfabric's CQ fd (tcp) also rings for our own operations
                // and for sockets ready to move more data. The shm doorbell
                // rings only for arrivals, so while our sends are in flight
                // (their completions need the peer's reply) we poll instead;
                // so too while a full queue holds work back (a backlog),
                // which no fd announces the end of.
                bool fd_enough =
                    transport->fd_covers_own_operations() || engine->ops_in_flight() == 0;
                if (transport->wait_fd() >= 0 && fd_enough && !engine->has_backlog() &&
                    transport->prepare_wait()) {
                    if (progress_locked()) {
                        transport->finish_wait();
                        notify_probers();
                        idle_us = 0;
                        continue;
                    }
                    blocking = true;
                    fd = transport->wait_fd();
                    timeout_ms = 100;
                }
            }
            if (!blocking) idle_us = idle_us == 0 ? 20 : std::min(idle_us * 2, 1000);
        }
        pollfd fds[2] = {{wake_fd, POLLIN, 0}, {fd, POLLIN, 0}};
        if (timeout_ms > 0) {
            ::poll(fds, fd >= 0 ? 2 : 1, timeout_ms);
        } else {
            timespec ts{0, idle_us * 1000L};
            ::ppoll(fds, 1, &ts, nullptr);
        }
        if (fds[0].revents & POLLIN) {
            uint64_t v;
            [[maybe_unused]] ssize_t n = ::read(wake_fd, &v, sizeof v);
        }
        if (blocking) {
            std::lock_guard<msg::TimedMutex> lk(mu);
            transport->finish_wait();
        }
    }
}

}  // namespace msg
