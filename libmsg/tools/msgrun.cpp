// msgrun: starts N local processes as one libmsg job and serves their
// address exchange; or, with --serve, only coordinates a job started elsewhere.
#include <glob.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/coordinator.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/job_key.hpp"

namespace {

void usage(FILE *out) {
    std::fprintf(out,
                 "usage: msgrun -n N [--timeout SECONDS] [--] PROGRAM [ARGS...]\n"
                 "       msgrun -n N --serve HOST:PORT [--key-file PATH] [--timeout SECONDS]\n"
                 "\n"
                 "Starts N processes of PROGRAM on this machine as one libmsg job\n"
                 "(ranks 0..N-1) and coordinates their start-up and failure notices.\n"
                 "With --serve, starts no processes: it coordinates N ranks started by\n"
                 "other means, which set VIADUCT_COORDINATOR=HOST:PORT, VIADUCT_RANK,\n"
                 "VIADUCT_SIZE and the job key (VIADUCT_JOB_KEY or VIADUCT_JOB_KEY_FILE).\n"
                 "Every job has a random key; msgrun gives it to the ranks it starts. With\n"
                 "--serve it uses the key in VIADUCT_JOB_KEY(_FILE) if set, else makes one\n"
                 "and writes it to --key-file or prints it on standard output.\n"
                 "\n"
                 "  -n, --np N          number of ranks (1..4096)\n"
                 "  --timeout SECONDS   kill the job after this long (exit status 124)\n"
                 "  --join-timeout MS   time allowed for all ranks to join (default 30000)\n"
                 "  --key-file PATH     with --serve: write the job key to PATH, a new file\n"
                 "                      (mode 0600; an existing file is refused)\n"
                 "  -h, --help          this text\n"
                 "\n"
                 "Exit status: 0 if every rank exits 0, else the first failing rank's\n"
                 "status (128+signal for a rank killed by a signal).\n");
}

bool parse_long(const char *s, long lo, long hi, long *out) {
    char *end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

// libfabric's shm provider keeps each endpoint in a /dev/shm file that only
// a clean close removes; libmsg names them viaduct-<pid>-<random>.
void remove_shm_regions(pid_t pid) {
    std::string pattern = "/dev/shm/viaduct-" + std::to_string(pid) + "-*";
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
        for (size_t k = 0; k < g.gl_pathc; ++k) unlink(g.gl_pathv[k]);
    globfree(&g);
}

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) {
    g_signal = sig;
}

}  // namespace

int main(int argc, char **argv) {
    long n = 0, timeout_s = 0, join_ms = 30000;
    std::string serve, key_file;
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char *name) -> const char * {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "msgrun: %s needs a value\n", name);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else if (a == "-n" || a == "--np") {
            const char *v = value("-n");
            if (!parse_long(v, 1, 4096, &n)) {
                std::fprintf(stderr, "msgrun: -n %s: need a number of ranks in 1..4096\n", v);
                return 2;
            }
        } else if (a == "--timeout") {
            const char *v = value("--timeout");
            if (!parse_long(v, 1, 86400 * 7, &timeout_s)) {
                std::fprintf(stderr, "msgrun: --timeout %s: need seconds > 0\n", v);
                return 2;
            }
        } else if (a == "--join-timeout") {
            const char *v = value("--join-timeout");
            if (!parse_long(v, 1, 86400000, &join_ms)) {
                std::fprintf(stderr, "msgrun: --join-timeout %s: need milliseconds > 0\n", v);
                return 2;
            }
        } else if (a == "--serve") {
            serve = value("--serve");
        } else if (a == "--key-file") {
            key_file = value("--key-file");
        } else if (a == "--") {
            ++i;
            break;
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "msgrun: unknown option %s (see --help)\n", a.c_str());
            return 2;
        } else {
            break;
        }
    }
    if (n == 0) {
        std::fprintf(stderr, "msgrun: -n N is required (see --help)\n");
        return 2;
    }
    if (serve.empty() && i >= argc) {
        std::fprintf(stderr, "msgrun: no program to run (see --help)\n");
        return 2;
    }

    if (!key_file.empty() && serve.empty()) {
        std::fprintf(stderr, "msgrun: --key-file goes with --serve\n");
        return 2;
    }
    // The job's secret: only processes that hold it join the job.
    msg::boot::JobKey key;
    const bool key_from_env = !serve.empty() && msg::boot::job_key_given();
    std::string error;
    if (!key_from_env) {
        key = msg::boot::make_job_key();
    } else if (!msg::boot::load_job_key(&key, &error)) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 2;
    }
    std::string host = "127.0.0.1", port = "0";
    if (!serve.empty() && !msg::boot::parse_host_port(serve, host, port)) {
        std::fprintf(stderr, "msgrun: --serve %s: expected HOST:PORT\n", serve.c_str());
        return 2;
    }
    auto coord = msg::boot::Coordinator::listen(host, port, static_cast<int>(n),
                                                static_cast<int>(join_ms), key, &error);
    if (!coord) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 1;
    }
    coord->start();
    auto start = std::chrono::steady_clock::now();
    auto expired = [&] {
        return timeout_s > 0 &&
               std::chrono::steady_clock::now() - start > std::chrono::seconds(timeout_s);
    };

    if (!serve.empty()) {
        if (!key_file.empty()) {
            if (!msg::boot::write_key_file(key_file, key, &error)) {
                std::fprintf(stderr, "msgrun: --key-file: %s\n", error.c_str());
                return 2;
            }
        } else if (!key_from_env) {
            std::printf("VIADUCT_JOB_KEY=%s\n", msg::boot::key_to_hex(key).c_str());
            std::fflush(stdout);
        }
        std::fprintf(stderr, "msgrun: coordinating %ld ranks on %s:%d\n", n, host.c_str(),
                     coord->port());
        while (!expired()) {
            // join() would block; poll for the end instead.
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (coord->finished()) break;
        }
        if (expired()) {
            std::fprintf(stderr, "msgrun: --timeout of %ld s reached\n", timeout_s);
            return 124;
        }
        return coord->join() ? 0 : 1;
    }

    std::string address = host + ":" + std::to_string(coord->port());
    std::vector<pid_t> pids(static_cast<size_t>(n), -1);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    for (long r = 0; r < n; ++r) {
        pid_t pid = fork();
        if (pid < 0) {
            std::perror("msgrun: fork");
            for (pid_t p : pids)
                if (p > 0) kill(p, SIGKILL);
            return 1;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            setenv("VIADUCT_COORDINATOR", address.c_str(), 1);
            setenv("VIADUCT_RANK", std::to_string(r).c_str(), 1);
            setenv("VIADUCT_SIZE", std::to_string(n).c_str(), 1);
            setenv("VIADUCT_JOB_KEY", msg::boot::key_to_hex(key).c_str(), 1);
            unsetenv("VIADUCT_JOB_KEY_FILE");
            execvp(argv[i], argv + i);
            std::fprintf(stderr, "msgrun: cannot run %s: %s\n", argv[i], std::strerror(errno));
            _exit(127);
        }
        pids[static_cast<size_t>(r)] = pid;
    }

    int exit_code = 0;
    long running = n;
    bool killed = false;
    while (running > 0) {
        int status = 0;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0 || (pid < 0 && errno == EINTR)) {
            if (!killed && (g_signal != 0 || expired())) {
                if (g_signal == 0) {
                    std::fprintf(stderr, "msgrun: --timeout of %ld s reached; killing the job\n",
                                 timeout_s);
                    exit_code = 124;
                }
                for (pid_t p : pids)
                    if (p > 0) kill(p, g_signal != 0 ? g_signal : SIGKILL);
                killed = true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            continue;
        }
        if (pid < 0) break;
        long rank = -1;
        for (long r = 0; r < n; ++r)
            if (pids[static_cast<size_t>(r)] == pid) rank = r;
        if (rank < 0) continue;
        pids[static_cast<size_t>(rank)] = -1;
        --running;
        int code = 0;
        if (WIFSIGNALED(status)) {
            code = 128 + WTERMSIG(status);
            std::fprintf(stderr, "msgrun: rank %ld (pid %d) killed by signal %d\n", rank, pid,
                         WTERMSIG(status));
        } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            code = WEXITSTATUS(status);
            std::fprintf(stderr, "msgrun: rank %ld (pid %d) exited with status %d\n", rank, pid,
                         code);
        }
        if (code != 0) remove_shm_regions(pid);
        if (code != 0 && exit_code == 0) exit_code = code;
        // A rank that left in order is not a failure; the coordinator knows.
        coord->report_failure(static_cast<int>(rank));
    }
    coord->stop();
    coord->join();
    if (g_signal != 0 && exit_code == 0) exit_code = 128 + g_signal;
    return exit_code;
}
