// Spawning msgrun for a scenario and reading its output without ever hanging the driver.
#include "launcher.hpp"

#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "viaduct/clock.hpp"

extern char **environ;

namespace launcher {
namespace {

std::string required_env(const char *name) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0')
        throw std::runtime_error(std::string(name) +
                                 " is not set: run the tests through `meson test`, which passes "
                                 "the paths of msgrun and the worker");
    return v;
}

// The parent's environment minus any job or VIADUCT_* settings it happens to carry, plus the
// scenario's own: a run must not depend on the shell it was started from.
std::vector<std::string> child_environment(const JobSpec &spec) {
    std::vector<std::string> env;
    for (char **e = environ; *e != nullptr; ++e) {
        std::string entry = *e;
        bool viaduct = entry.rfind("VIADUCT_", 0) == 0;
        bool kept = entry.rfind("VIADUCT_DEBUG=", 0) == 0 || entry.rfind("VIADUCT_TEST_", 0) == 0;
        if (!viaduct || kept) env.push_back(entry);
    }
    for (const auto &[name, value] : spec.env) env.push_back(name + "=" + value);
    return env;
}

double now() {
    return viaduct::now_seconds();
}

int decode(int wstatus) {
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
    return -1;
}

// A shared-memory endpoint lives in a /dev/shm file (libfabric's shm names it "<pid>:...",
// libmsg "viaduct-<pid>-...") that only an orderly close removes. Ranks these tests kill, or
// that fail a check and _Exit, leave theirs behind: RAM lost until reboot. Remove the files of
// this job's ranks that are gone; best effort, so a change of naming only stops the cleanup.
void remove_shm_files_of_dead_ranks(const JobResult &result) {
    for (const std::string &line : result.lines_with("] pid ")) {
        const int pid = std::atoi(line.substr(line.find("] pid ") + 6).c_str());
        if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;
        const std::string id = std::to_string(pid);
        for (const std::string &pattern :
             {"/dev/shm/" + id + ":*", "/dev/shm/viaduct-" + id + "-*"}) {
            glob_t found{};
            if (glob(pattern.c_str(), 0, nullptr, &found) == 0)
                for (size_t i = 0; i < found.gl_pathc; ++i) unlink(found.gl_pathv[i]);
            globfree(&found);
        }
    }
}

}  // namespace

int slowdown() {
    const char *v = std::getenv("VIADUCT_TEST_SLOWDOWN");
    int f = v != nullptr ? std::atoi(v) : 1;
    return f >= 1 ? f : 1;
}

std::vector<std::string> JobResult::lines_with(const std::string &needle) const {
    std::vector<std::string> found;
    size_t start = 0;
    while (start < output.size()) {
        size_t end = output.find('\n', start);
        if (end == std::string::npos) end = output.size();
        std::string line = output.substr(start, end - start);
        if (line.find(needle) != std::string::npos) found.push_back(line);
        start = end + 1;
    }
    return found;
}

std::string JobResult::tail(size_t max_bytes) const {
    if (output.size() <= max_bytes) return output;
    return "...\n" + output.substr(output.size() - max_bytes);
}

namespace {

// Starts msgrun with stdout and stderr on one pipe, in a process group of its own (so a stuck
// job can be killed whole, ranks included). Returns its pid; *read_fd is the pipe's read end.
pid_t spawn_msgrun(const std::string &msgrun, std::vector<std::string> &argv_s,
                   std::vector<std::string> &env_s, int *read_fd) {
    std::vector<char *> argv;
    for (auto &a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char *> envp;
    for (auto &e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group, so a stuck job can be killed whole, ranks included.
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);

    pid_t pid = -1;
    int rc = posix_spawn(&pid, msgrun.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        throw std::runtime_error("cannot start " + msgrun + ": " + std::strerror(rc));
    }
    *read_fd = fds[0];
    return pid;
}

}  // namespace

JobResult run_job(const JobSpec &spec) {
    const std::string msgrun = required_env("VIADUCT_MSGRUN");
    const std::string worker = required_env("VIADUCT_TEST_WORKER");
    const int timeout = spec.timeout_seconds * slowdown();

    std::vector<std::string> argv_s = {
        msgrun, "-n",         std::to_string(spec.ranks), "--timeout", std::to_string(timeout),
        worker, spec.scenario};
    argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
    std::vector<std::string> env_s = child_environment(spec);

    JobResult result;
    const double start = now();
    int out_fd = -1;
    const pid_t pid = spawn_msgrun(msgrun, argv_s, env_s, &out_fd);

    // msgrun enforces the timeout itself; the driver steps in only if msgrun does not.
    const double hard_deadline = start + timeout + 30.0;
    bool exited = false;
    double exited_at = 0;
    int wstatus = 0;
    for (;;) {
        if (!exited && waitpid(pid, &wstatus, WNOHANG) == pid) {
            exited = true;
            exited_at = now();
        }
        // A rank that outlives msgrun may hold the pipe open; do not wait for it long.
        if (exited && now() - exited_at > 5.0) break;
        if (now() > hard_deadline) {
            kill(-pid, SIGKILL);
            result.killed_by_driver = true;
            if (!exited) waitpid(pid, &wstatus, 0);
            exited = true;
            break;
        }
        pollfd p{out_fd, POLLIN, 0};
        if (poll(&p, 1, 200) > 0) {
            char chunk[65536];
            ssize_t n = read(out_fd, chunk, sizeof chunk);
            if (n > 0) {
                result.output.append(chunk, static_cast<size_t>(n));
            } else if (n == 0) {
                if (!exited) {
                    waitpid(pid, &wstatus, 0);
                    exited = true;
                }
                break;
            }
        }
    }
    close(out_fd);
    // Leftover ranks of a failed job must not linger into the next test.
    kill(-pid, SIGKILL);
    result.status = decode(wstatus);
    result.seconds = now() - start;
    remove_shm_files_of_dead_ranks(result);
    return result;
}

}  // namespace launcher
