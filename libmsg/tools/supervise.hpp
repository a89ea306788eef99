// msgrun's care of the ranks it starts: each rank leads a process group of its own, and
// SIGINT/SIGTERM/SIGHUP reach every group, then SIGKILL after a grace period.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace msgrun {

// msgrun's status when --timeout stopped the job (as timeout(1)).
constexpr int kTimeoutStatus = 124;

class Supervisor {
  public:
    // Catches SIGINT, SIGTERM and SIGHUP (those msgrun was not started with ignored, as
    // under nohup: the ranks inherit those ignored) and SIGCHLD, and holds them in the
    // calling thread until launch() has started every rank. Create it before starting any
    // other thread: threads started later inherit the hold, so only this one sees them.
    // timeout_s: the job's time limit from launch (0: none).
    static std::unique_ptr<Supervisor> create(long timeout_s, long grace_s, std::string *error);
    ~Supervisor();
    Supervisor(const Supervisor &) = delete;
    Supervisor &operator=(const Supervisor &) = delete;

    // Starts argv[0] (looked up in PATH) once per rank; rank r's environment is msgrun's
    // with the NAME=value entries of env[r] set, and when `cpus` is not empty rank r runs on
    // the CPUs of cpus[r] only (a rank that cannot be bound exits 127 saying why). If a rank
    // cannot be forked, kills the ranks already started and returns false with *error.
    bool launch(char *const *argv, const std::vector<std::vector<std::string>> &env,
                const std::vector<cpu_set_t> &cpus, std::string *error);

    // After a rank fails, the others have `linger_s` to end by themselves (they hear of the
    // failure from the coordinator and may want to clean up), then they are stopped as by
    // SIGTERM; at once if every rank still running is stopped (SIGSTOP). A rank stopped for
    // longer than `stopped_s` is passed to on_stopped (msgrun reports it failed, so its peers
    // are not left waiting on it). Call before wait().
    void on_failure(long linger_s, long stopped_s, std::function<void(int rank)> on_stopped);

    // Waits for every rank, calling on_exit(rank, pid, wait status) as each is reaped.
    // Returns msgrun's exit status: kTimeoutStatus if the time limit stopped the job, 128+N
    // if signal N did, else the first
    // failing rank's status (128+N for a rank killed by signal N), else 0.
    int wait(const std::function<void(int rank, pid_t pid, int status)> &on_exit);

  private:
    struct Rank {
        pid_t pid = -1;
        bool running = false;
        // The rank's process group may still hold its descendants after it has exited.
        bool group_open = false;
        bool stopped = false;  // by a signal (SIGSTOP, SIGTSTP), not yet continued
        bool reported = false;
        std::chrono::steady_clock::time_point stopped_at{};
    };
    void watch_failures();
    Supervisor() = default;
    void stop(int sig);
    void kill_job(const char *why);
    void signal_job(int sig);
    void refresh_groups();
    bool reap(const std::function<void(int, pid_t, int)> &on_exit);
    std::string running_ranks() const;

    long timeout_s_ = 0;
    long grace_s_ = 5;
    std::chrono::steady_clock::time_point deadline_{};
    bool timed_out_ = false;
    int pipe_r_ = -1;
    sigset_t held_{};
    sigset_t saved_mask_{};
    std::vector<int> caught_;
    std::vector<Rank> ranks_;
    long running_ = 0;
    int first_signal_ = 0;
    bool stopping_ = false;
    bool killed_ = false;
    std::chrono::steady_clock::time_point kill_at_{};
    std::chrono::steady_clock::time_point give_up_at_{};
    int first_failure_ = 0;
    std::chrono::steady_clock::time_point failed_at_{};
    long linger_s_ = 60, stopped_s_ = 10;
    std::function<void(int)> on_stopped_;
};

}  // namespace msgrun
