// msgrun's care of the ranks it starts: process groups, signal forwarding, the grace period
// before SIGKILL, and reaping (msgrun is the subreaper of everything its ranks start).
#include "supervise.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

extern char **environ;

namespace msgrun {
namespace {

constexpr int kJobSignals[] = {SIGINT, SIGTERM, SIGHUP};
// How long msgrun waits for the job's processes to end after SIGKILL.
constexpr long kKillWaitS = 10;

// The handler may run in any thread; a byte in a pipe hands the signal to the waiting loop
// without a race between checking a flag and going to sleep.
int g_pipe_w = -1;
void on_signal(int sig) {
    int saved = errno;
    unsigned char b = static_cast<unsigned char>(sig);
    [[maybe_unused]] ssize_t n = ::write(g_pipe_w, &b, 1);
    errno = saved;
}

std::string signal_name(int sig) {
    const char *abbrev = sigabbrev_np(sig);
    return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

bool group_exists(pid_t pgid) {
    return ::kill(-pgid, 0) == 0 || errno == EPERM;
}

void write_all(int fd, const char *s) {
    size_t len = std::strlen(s);
    while (len > 0) {
        ssize_t n = ::write(fd, s, len);
        if (n <= 0) return;
        s += n;
        len -= static_cast<size_t>(n);
    }
}

// Runs in the child between fork and exec, where only async-signal-safe calls are allowed
// (msgrun has other threads): everything it needs was prepared before fork.
[[noreturn]] void exec_rank(char *const *argv, char *const *envp, pid_t msgrun, int stdin_fd,
                            const std::vector<int> &caught, const sigset_t &mask,
                            const cpu_set_t *cpus) {
    // A group of its own: a signal for the job reaches the rank and whatever it starts,
    // and never msgrun's parent or siblings.
    ::setpgid(0, 0);
    // If msgrun dies (even by SIGKILL) the rank gets SIGTERM, not SIGKILL: with msgrun gone
    // nobody else cleans up after the rank (its temporary files, the /dev/shm regions only a
    // clean close removes), so the rank must get the chance to. A rank that ignores SIGTERM
    // has lost its coordinator and its peers, so its libmsg calls fail. The signal comes
    // when the forking thread ends: msgrun forks from its main thread only. msgrun may have
    // died before prctl took effect; then the rank's parent is already someone else.
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != msgrun) ::_exit(1);
    if (cpus != nullptr && ::sched_setaffinity(0, sizeof *cpus, cpus) != 0) {
        const char *why = strerrordesc_np(errno);
        write_all(2, "msgrun: cannot bind a rank to its CPU (--bind-to): ");
        write_all(2, why != nullptr ? why : "sched_setaffinity failed");
        write_all(2, "\n");
        ::_exit(127);
    }
    if (stdin_fd >= 0) ::dup2(stdin_fd, 0);
    for (int sig : caught) ::signal(sig, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    ::execvpe(argv[0], argv, envp);
    int err = errno;
    write_all(2, "msgrun: cannot run ");
    write_all(2, argv[0]);
    write_all(2, ": ");
    const char *why = strerrordesc_np(err);
    write_all(2, why != nullptr ? why : "exec failed");
    write_all(2, "\n");
    ::_exit(127);
}

}  // namespace

std::unique_ptr<Supervisor> Supervisor::create(long timeout_s, long grace_s, std::string *error) {
    std::unique_ptr<Supervisor> s(new Supervisor());
    s->timeout_s_ = timeout_s;
    s->grace_s_ = grace_s;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        *error = std::string("pipe: ") + std::strerror(errno);
        return nullptr;
    }
    s->pipe_r_ = fds[0];
    g_pipe_w = fds[1];
    // Descendants a rank leaves behind become msgrun's children: msgrun can then wait for
    // them after a stop, and reap them (no zombies kept in the ranks' process groups).
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        *error = std::string("prctl(PR_SET_CHILD_SUBREAPER): ") + std::strerror(errno);
        return nullptr;
    }
    sigemptyset(&s->held_);
    std::vector<int> wanted(std::begin(kJobSignals), std::end(kJobSignals));
    wanted.push_back(SIGCHLD);
    for (int sig : wanted) {
        struct sigaction old {};
        ::sigaction(sig, nullptr, &old);
        if (sig != SIGCHLD && old.sa_handler == SIG_IGN) continue;
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART | (sig == SIGCHLD ? SA_NOCLDSTOP : 0);
        if (::sigaction(sig, &sa, nullptr) != 0) {
            *error = "sigaction(" + signal_name(sig) + "): " + std::strerror(errno);
            return nullptr;
        }
        s->caught_.push_back(sig);
        sigaddset(&s->held_, sig);
    }
    ::pthread_sigmask(SIG_BLOCK, &s->held_, &s->saved_mask_);
    return s;
}

Supervisor::~Supervisor() {
    for (int sig : caught_) ::signal(sig, SIG_DFL);
    if (pipe_r_ >= 0) ::close(pipe_r_);
    if (g_pipe_w >= 0) ::close(g_pipe_w);
    g_pipe_w = -1;
}

bool Supervisor::launch(char *const *argv, const std::vector<std::vector<std::string>> &env,
                        const std::vector<cpu_set_t> &cpus, std::string *error) {
    // Environments are built before fork: the child may not allocate.
    std::vector<std::vector<std::string>> envs(env.size());
    std::vector<std::vector<char *>> envps(env.size());
    for (size_t r = 0; r < env.size(); ++r) {
        auto overridden = [&](const char *entry) {
            const char *eq = std::strchr(entry, '=');
            size_t len = eq != nullptr ? static_cast<size_t>(eq - entry) : std::strlen(entry);
            for (const std::string &e : env[r])
                if (e.size() > len && e.compare(0, len, entry, len) == 0 && e[len] == '=')
                    return true;
            return false;
        };
        for (char **e = environ; *e != nullptr; ++e)
            if (!overridden(*e)) envs[r].push_back(*e);
        envs[r].insert(envs[r].end(), env[r].begin(), env[r].end());
        for (std::string &e : envs[r]) envps[r].push_back(e.data());
        envps[r].push_back(nullptr);
    }

    bool ok = true;
    const pid_t self = ::getpid();
    // A rank outside the terminal's foreground group that reads the terminal is stopped
    // (SIGTTIN) and the job hangs: such a rank reads end-of-file instead.
    int stdin_fd = ::isatty(0) ? ::open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
    for (size_t r = 0; r < env.size(); ++r) {
        pid_t pid = ::fork();
        if (pid < 0) {
            *error = std::string("fork: ") + std::strerror(errno);
            ok = false;
            break;
        }
        if (pid == 0)
            exec_rank(argv, envps[r].data(), self, stdin_fd, caught_, saved_mask_,
                      r < cpus.size() ? &cpus[r] : nullptr);
        // Also here, so the group exists before msgrun signals it; EACCES once the child
        // has exec'd means it already did it itself.
        ::setpgid(pid, pid);
        ranks_.push_back({pid, true, true});
        ++running_;
    }
    if (stdin_fd >= 0) ::close(stdin_fd);
    if (!ok) {
        for (const Rank &k : ranks_) ::kill(-k.pid, SIGKILL);
        for (const Rank &k : ranks_) ::waitpid(k.pid, nullptr, 0);
        ranks_.clear();
        running_ = 0;
    }
    ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
    return ok;
}

std::string Supervisor::running_ranks() const {
    std::string list;
    int count = 0;
    for (size_t r = 0; r < ranks_.size(); ++r)
        if (ranks_[r].running) {
            list += (count++ > 0 ? ", " : "") + std::to_string(r);
        }
    return (count == 1 ? "rank " : "ranks ") + list;
}

// A reaped rank's group id stays reserved while a member lives; once the group is empty the
// id may be reused by an unrelated process, so an empty group is never signalled again.
void Supervisor::refresh_groups() {
    for (Rank &k : ranks_)
        if (!k.running && k.group_open && !group_exists(k.pid)) k.group_open = false;
}

void Supervisor::signal_job(int sig) {
    refresh_groups();
    for (Rank &k : ranks_) {
        if (k.group_open) ::kill(-k.pid, sig);
        // A rank that moved to another group is still told, once.
        if (k.running && ::getpgid(k.pid) != k.pid) ::kill(k.pid, sig);
    }
}

void Supervisor::stop(int sig) {
    stopping_ = true;
    kill_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(grace_s_);
    signal_job(sig);
    // A stopped process acts on the signal only once continued.
    signal_job(SIGCONT);
}

void Supervisor::kill_job(const char *why) {
    killed_ = true;
    give_up_at_ = std::chrono::steady_clock::now() + std::chrono::seconds(kKillWaitS);
    if (running_ > 0)
        std::fprintf(stderr, "msgrun: %s: sending SIGKILL to %s\n", why, running_ranks().c_str());
    else
        std::fprintf(stderr, "msgrun: %s: sending SIGKILL to what the ranks left running\n", why);
    signal_job(SIGKILL);
}

// Reaps every child that has ended: ranks, and descendants they left (msgrun is their
// subreaper). Returns false once msgrun has no child left at all.
bool Supervisor::reap(const std::function<void(int, pid_t, int)> &on_exit) {
    for (;;) {
        int status = 0;
        pid_t pid = ::waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED);
        if (pid == 0) return true;
        if (pid < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        auto it = std::find_if(ranks_.begin(), ranks_.end(),
                               [&](const Rank &k) { return k.pid == pid && k.running; });
        if (it == ranks_.end()) continue;
        if (WIFSTOPPED(status) || WIFCONTINUED(status)) {
            it->stopped = WIFSTOPPED(status);
            it->stopped_at = std::chrono::steady_clock::now();
            if (it->stopped)
                std::fprintf(stderr, "msgrun: rank %d stopped by %s (pid %d)\n",
                             static_cast<int>(it - ranks_.begin()),
                             signal_name(WSTOPSIG(status)).c_str(), pid);
            continue;
        }
        it->running = false;
        --running_;
        int rank = static_cast<int>(it - ranks_.begin());
        int code = 0;
        if (WIFSIGNALED(status)) {
            code = 128 + WTERMSIG(status);
            std::fprintf(stderr, "msgrun: rank %d killed by %s%s (pid %d)\n", rank,
                         signal_name(WTERMSIG(status)).c_str(),
                         WCOREDUMP(status) ? ", core dumped" : "", pid);
        } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            code = WEXITSTATUS(status);
            std::fprintf(stderr, "msgrun: rank %d exited with status %d (pid %d)\n", rank, code,
                         pid);
        }
        if (code != 0 && first_failure_ == 0) {
            first_failure_ = code;
            failed_at_ = std::chrono::steady_clock::now();
        }
        on_exit(rank, pid, status);
    }
}

void Supervisor::on_failure(long linger_s, long stopped_s, std::function<void(int)> on_stopped) {
    linger_s_ = linger_s;
    stopped_s_ = stopped_s;
    on_stopped_ = std::move(on_stopped);
}

// A stopped rank answers nobody: its peers are told it failed. A job with a failed rank ends
// once its other ranks have had their time to notice and clean up.
void Supervisor::watch_failures() {
    const auto now = std::chrono::steady_clock::now();
    for (Rank &k : ranks_) {
        if (!k.running || !k.stopped || k.reported ||
            now - k.stopped_at < std::chrono::seconds(stopped_s_))
            continue;
        k.reported = true;
        const int rank = static_cast<int>(&k - ranks_.data());
        std::fprintf(stderr, "msgrun: rank %d stopped for %ld s: reported failed to its peers\n",
                     rank, stopped_s_);
        if (first_failure_ == 0) {
            first_failure_ = 128 + SIGSTOP;
            failed_at_ = now;
        }
        if (on_stopped_) on_stopped_(rank);
    }
    if (first_failure_ == 0 || stopping_ || running_ == 0) return;
    const bool all_stopped = std::all_of(ranks_.begin(), ranks_.end(),
                                         [](const Rank &k) { return !k.running || k.stopped; });
    if (!all_stopped && now - failed_at_ < std::chrono::seconds(linger_s_)) return;
    std::fprintf(stderr, "msgrun: a rank failed; ending %s%s\n", running_ranks().c_str(),
                 all_stopped ? " (stopped)" : " (still running)");
    stop(SIGTERM);
}

int Supervisor::wait(const std::function<void(int rank, pid_t pid, int status)> &on_exit) {
    bool children = true;
    // After a stop, msgrun also waits for what the ranks started: within the grace period
    // for anything, after SIGKILL for what was in the ranks' groups (so no zombie is left).
    auto groups_open = [&] {
        return std::any_of(ranks_.begin(), ranks_.end(),
                           [](const Rank &k) { return k.group_open; });
    };
    while (running_ > 0 || (stopping_ && children && (!killed_ || groups_open()))) {
        int timeout_ms = -1;
        auto now = std::chrono::steady_clock::now();
        // A process SIGKILL cannot end (stuck in the kernel) must not keep msgrun for good.
        if (killed_ && now >= give_up_at_) break;
        auto until = [&](std::chrono::steady_clock::time_point t) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(t - now).count();
            return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
        };
        if (killed_)
            timeout_ms = until(give_up_at_);
        else if (stopping_)
            timeout_ms = until(kill_at_);
        else if (!stopping_ && timeout_s_ > 0)
            timeout_ms = until(deadline_);
        // Failures and stopped ranks are looked at every half second.
        if (!stopping_ && (timeout_ms < 0 || timeout_ms > 500)) timeout_ms = 500;
        pollfd p{pipe_r_, POLLIN, 0};
        ::poll(&p, 1, timeout_ms);
        unsigned char buf[64];
        ssize_t n;
        while ((n = ::read(pipe_r_, buf, sizeof buf)) > 0)
            for (ssize_t k = 0; k < n; ++k) {
                int sig = buf[k];
                if (sig == SIGCHLD) continue;
                if (!stopping_) {
                    first_signal_ = sig;
                    std::fprintf(stderr,
                                 "msgrun: %s: forwarding it to %s (SIGKILL in %ld s, or at a "
                                 "second signal)\n",
                                 signal_name(sig).c_str(), running_ranks().c_str(), grace_s_);
                    stop(sig);
                } else if (!killed_) {
                    kill_job(("second signal (" + signal_name(sig) + ")").c_str());
                }
            }
        children = reap(on_exit);
        refresh_groups();
        watch_failures();
        if (!stopping_ && timeout_s_ > 0 && running_ > 0 &&
            std::chrono::steady_clock::now() >= deadline_) {
            timed_out_ = true;
            std::fprintf(stderr,
                         "msgrun: timeout after %ld s: %s still running (SIGTERM now, SIGKILL "
                         "in %ld s)\n",
                         timeout_s_, running_ranks().c_str(), grace_s_);
            stop(SIGTERM);
        }
        if (stopping_ && !killed_ && std::chrono::steady_clock::now() >= kill_at_) {
            std::string why = "grace period of " + std::to_string(grace_s_) + " s over";
            kill_job(why.c_str());
        }
    }
    reap(on_exit);
    if (running_ > 0)
        std::fprintf(stderr, "msgrun: %s still running %ld s after SIGKILL; leaving\n",
                     running_ranks().c_str(), kKillWaitS);
    if (timed_out_) return kTimeoutStatus;
    if (first_signal_ != 0) return 128 + first_signal_;
    return first_failure_;
}

}  // namespace msgrun
