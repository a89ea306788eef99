// msgrun: starts N local processes as one libmsg job and serves their
// address exchange; or, with --serve, only coordinates a job started elsewhere.
#include <glob.h>
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
#include "common/config.hpp"
#include "common/log.hpp"
#include "supervise.hpp"

namespace {

void usage(FILE *out) {
    std::fprintf(out,
                 "usage: msgrun -n N [--timeout SECONDS] [--grace SECONDS] [--] PROGRAM [ARGS...]\n"
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
                 "  --timeout SECONDS   stop the job after this long: SIGTERM, then SIGKILL\n"
                 "                      after the grace period (exit status 124)\n"
                 "  --grace SECONDS     time a rank has to exit after SIGTERM before SIGKILL\n"
                 "                      (default 5; 0: SIGKILL right after SIGTERM)\n"
                 "  --failure-grace SECONDS  after a rank fails, time the others have to end\n"
                 "                      by themselves before they are stopped as by SIGTERM\n"
                 "                      (default 60; at once if all that remain are stopped)\n"
                 "  --join-timeout MS   time allowed for all ranks to join (default 30000); a\n"
                 "                      rank stopped (SIGSTOP) for a third of it is reported\n"
                 "                      failed to its peers\n"
                 "  --key-file PATH     with --serve: write the job key to PATH, a new file\n"
                 "                      (mode 0600; an existing file is refused)\n"
                 "  -h, --help          this text\n"
                 "\n"
                 "Each rank leads a process group of its own. SIGINT, SIGTERM or SIGHUP sent\n"
                 "to msgrun goes to every rank's group; a second one, or the end of the grace\n"
                 "period, sends SIGKILL. A rank whose msgrun dies gets SIGTERM.\n"
                 "\n"
                 "Exit status:\n"
                 "  0        every rank exited 0\n"
                 "  124      --timeout stopped the job, whatever the ranks' statuses\n"
                 "  128+N    msgrun got signal N and stopped the job (SIGINT 130,\n"
                 "           SIGTERM 143, SIGHUP 129), whatever the ranks' statuses\n"
                 "  else     the first failing rank's status (128+N for a rank killed by\n"
                 "           signal N; its message says which); 1 or 2 for msgrun's own\n"
                 "           errors and usage errors\n");
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

// The coordinator follows the VIADUCT_* settings its ranks run with: the
// heartbeat period on its links and debug lines. A variable that does not
// parse is left to the ranks to report.
msg::boot::CoordinatorLimits coordinator_limits() {
    msg_config_t config;
    msg::config_from_environment(&config, false);
    msg::log_set_level(config.debug != 0 ? MSG_LOG_DEBUG : config.log_level);
    msg::boot::CoordinatorLimits limits;
    limits.heartbeat_ms = msg::boot::heartbeat_ms(config.timeout_ms, config.heartbeat_ms);
    return limits;
}

struct Options {
    long n = 0, timeout_s = 0, join_ms = 30000, grace_s = 5, failure_grace_s = 60;
    std::string serve, key_file;
    int program = 0;  // argv's index of PROGRAM
};

// Reads the options before PROGRAM. Returns -1 when msgrun goes on, else the
// status it exits with (0 after --help, 2 for a usage error).
int parse_options(int argc, char **argv, Options &o) {
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
            if (!parse_long(v, 1, 4096, &o.n)) {
                std::fprintf(stderr, "msgrun: -n %s: need a number of ranks in 1..4096\n", v);
                return 2;
            }
        } else if (a == "--timeout") {
            const char *v = value("--timeout");
            if (!parse_long(v, 1, 86400 * 7, &o.timeout_s)) {
                std::fprintf(stderr, "msgrun: --timeout %s: need seconds > 0\n", v);
                return 2;
            }
        } else if (a == "--failure-grace") {
            const char *v = value("--failure-grace");
            if (!parse_long(v, 0, 86400, &o.failure_grace_s)) {
                std::fprintf(stderr, "msgrun: --failure-grace %s: need seconds >= 0\n", v);
                return 2;
            }
        } else if (a == "--grace") {
            const char *v = value("--grace");
            if (!parse_long(v, 0, 86400, &o.grace_s)) {
                std::fprintf(stderr, "msgrun: --grace %s: need seconds >= 0\n", v);
                return 2;
            }
        } else if (a == "--join-timeout") {
            const char *v = value("--join-timeout");
            if (!parse_long(v, 1, 86400000, &o.join_ms)) {
                std::fprintf(stderr, "msgrun: --join-timeout %s: need milliseconds > 0\n", v);
                return 2;
            }
        } else if (a == "--serve") {
            o.serve = value("--serve");
        } else if (a == "--key-file") {
            o.key_file = value("--key-file");
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
    o.program = i;
    return -1;
}

// The options that only make sense together. Returns -1 when they do, else 2.
int check_options(const Options &o, int argc) {
    if (o.n == 0) {
        std::fprintf(stderr, "msgrun: -n N is required (see --help)\n");
        return 2;
    }
    if (o.serve.empty() && o.program >= argc) {
        std::fprintf(stderr, "msgrun: no program to run (see --help)\n");
        return 2;
    }
    if (!o.key_file.empty() && o.serve.empty()) {
        std::fprintf(stderr, "msgrun: --key-file goes with --serve\n");
        return 2;
    }
    return -1;
}

// --serve: coordinates ranks started elsewhere until they are done or the
// timeout expires.
int serve_job(const Options &o, msg::boot::Coordinator &coord, const msg::boot::JobKey &key,
              bool key_from_env, const std::string &host) {
    coord.start();
    auto start = std::chrono::steady_clock::now();
    auto expired = [&] {
        return o.timeout_s > 0 &&
               std::chrono::steady_clock::now() - start > std::chrono::seconds(o.timeout_s);
    };
    std::string error;
    if (!o.key_file.empty()) {
        if (!msg::boot::write_key_file(o.key_file, key, &error)) {
            std::fprintf(stderr, "msgrun: --key-file: %s\n", error.c_str());
            return 2;
        }
    } else if (!key_from_env) {
        std::printf("VIADUCT_JOB_KEY=%s\n", msg::boot::key_to_hex(key).c_str());
        std::fflush(stdout);
    }
    std::fprintf(stderr, "msgrun: coordinating %ld ranks on %s:%d\n", o.n, host.c_str(),
                 coord.port());
    while (!expired()) {
        // join() would block; poll for the end instead.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (coord.finished()) break;
    }
    if (expired()) {
        std::fprintf(stderr, "msgrun: --timeout of %ld s reached\n", o.timeout_s);
        return 124;
    }
    return coord.join() ? 0 : 1;
}

// Starts the ranks on this machine, each told where the coordinator listens
// and the job's key, and waits for them all.
int run_local_job(const Options &o, char **argv, msg::boot::Coordinator &coord,
                  const msg::boot::JobKey &key, const std::string &host) {
    std::string error;
    auto supervisor = msgrun::Supervisor::create(o.timeout_s, o.grace_s, &error);
    if (!supervisor) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 1;
    }
    coord.start();
    std::string address = host + ":" + std::to_string(coord.port());
    std::vector<std::vector<std::string>> env;
    for (long r = 0; r < o.n; ++r)
        env.push_back({"VIADUCT_COORDINATOR=" + address, "VIADUCT_RANK=" + std::to_string(r),
                       "VIADUCT_SIZE=" + std::to_string(o.n),
                       "VIADUCT_JOB_KEY=" + msg::boot::key_to_hex(key)});
    // The ranks take the key msgrun gives them, not a file named in its own environment.
    unsetenv("VIADUCT_JOB_KEY_FILE");
    if (!supervisor->launch(argv + o.program, env, &error)) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 1;
    }
    supervisor->on_failure(o.failure_grace_s, (o.join_ms + 999) / 1000 / 3 + 1,
                           [&](int rank) { coord.report_failure(rank); });
    int exit_code = supervisor->wait([&](int rank, pid_t pid, int status) {
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) remove_shm_regions(pid);
        // A rank that left in order is not a failure; the coordinator knows.
        coord.report_failure(rank);
    });
    coord.stop();
    coord.join();
    return exit_code;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    int rc = parse_options(argc, argv, o);
    if (rc < 0) rc = check_options(o, argc);
    if (rc >= 0) return rc;
    // The job's secret: only processes that hold it join the job.
    msg::boot::JobKey key;
    const bool key_from_env = !o.serve.empty() && msg::boot::job_key_given();
    std::string error;
    if (!key_from_env) {
        key = msg::boot::make_job_key();
    } else if (!msg::boot::load_job_key(&key, &error)) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 2;
    }
    std::string host = "127.0.0.1", port = "0";
    if (!o.serve.empty() && !msg::boot::parse_host_port(o.serve, host, port)) {
        std::fprintf(stderr, "msgrun: --serve %s: expected HOST:PORT\n", o.serve.c_str());
        return 2;
    }
    auto coord = msg::boot::Coordinator::listen(host, port, static_cast<int>(o.n),
                                                static_cast<int>(o.join_ms), key, &error,
                                                coordinator_limits());
    if (!coord) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 1;
    }
    if (!o.serve.empty()) return serve_job(o, *coord, key, key_from_env, host);
    return run_local_job(o, argv, *coord, key, host);
}
