// msgrun: starts N local processes as one libmsg job and serves their
// address exchange; or, with --serve, only coordinates a job started elsewhere.
#include <glob.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/coordinator.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/job_key.hpp"
#include "common/config.hpp"
#include "common/log.hpp"
#include "msg/msg.h"
#include "supervise.hpp"
#include "viaduct/cli.hpp"
#include "viaduct/fatal.hpp"
#include "viaduct/host_memory.hpp"
#include "viaduct/path.hpp"

namespace {

const char *kDescription =
    "msgrun -n N [OPTIONS] [--] PROGRAM [ARGS...]\n"
    "msgrun -n N --serve HOST:PORT [--key-file PATH] [--timeout SECONDS]\n"
    "msgrun -n N --receive-memory [--json]\n"
    "msgrun [-n N] --info [--json]\n\n"
    "Starts N processes of PROGRAM on this machine as one libmsg job (ranks 0..N-1) and\n"
    "coordinates their start-up and failure notices. With --serve, starts no processes: it\n"
    "coordinates N ranks started by other means, which set VIADUCT_COORDINATOR=HOST:PORT,\n"
    "VIADUCT_RANK, VIADUCT_SIZE and the job key (VIADUCT_JOB_KEY or VIADUCT_JOB_KEY_FILE).\n"
    "Every job has a random key; msgrun gives it to the ranks it starts. With --serve it uses\n"
    "the key in VIADUCT_JOB_KEY(_FILE) if set, else makes one and writes it to --key-file or\n"
    "prints it on standard output. --receive-memory prints the receive buffers a rank of a\n"
    "job of N ranks allocates with the VIADUCT_* settings in the environment, and what N\n"
    "ranks on one host take, and starts nothing. --info prints what msg-info prints (the\n"
    "settings, providers and protocol table the ranks would use) and starts nothing.";

const char *kFooter =
    "Each rank leads a process group of its own. SIGINT, SIGTERM or SIGHUP sent to msgrun\n"
    "goes to every rank's group; a second one, or the end of the grace period, sends SIGKILL.\n"
    "A rank whose msgrun dies gets SIGTERM.\n"
    "\n"
    "Exit status:\n"
    "  0        every rank exited 0\n"
    "  124      --timeout stopped the job, whatever the ranks' statuses\n"
    "  128+N    msgrun got signal N and stopped the job (SIGINT 130, SIGTERM 143,\n"
    "           SIGHUP 129), whatever the ranks' statuses\n"
    "  1        the ranks exited 0, but not all joined within --join-timeout of the first,\n"
    "           one never joined (no msg_init; unless --allow-no-join), or one that\n"
    "           joined exited without msg_finalize\n"
    "  else     the first failing rank's status (128+N for a rank killed by signal N; its\n"
    "           message says which); 1 for msgrun's own errors, 2 for usage errors\n";

// Removes what a rank that has ended left in /dev/shm. libmsg removes the
// names of its shared memory once every peer has mapped it, so only a rank
// that died (or left without msg_finalize) during msg_init leaves any: the
// shm provider's region, viaduct-<pid>-<random> (and the provider's files
// named after it), the shm transport's region, viaduct-<pid>-shm-<random>,
// and the doorbell's flag, viaduct-db-<random><pid, 8 hex digits>. Called
// once the rank is reaped; the random part keeps another process's names
// safe even if the pid comes round again.
void remove_shm_regions(pid_t pid) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(pid));
    for (const std::string &pattern : {"/dev/shm/viaduct-" + std::to_string(pid) + "-*",
                                       "/dev/shm/viaduct-db-" + std::string(24 - 8, '?') + hex}) {
        glob_t g{};
        if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
            for (size_t k = 0; k < g.gl_pathc; ++k) unlink(g.gl_pathv[k]);
        globfree(&g);
    }
}

// After a rank fails its peers hear of it, and libmsg's calls of a peer wedged
// in the provider (on a dead rank's lock in shared memory) fail after the
// ranks' timeout: the job has that long twice, and a margin, to end by itself.
constexpr long kFailureMarginS = 5;

// The coordinator follows the VIADUCT_* settings its ranks run with: the
// heartbeat period on its links and debug lines. A variable that does not
// parse is left to the ranks to report.
msg::boot::CoordinatorLimits coordinator_limits(int *timeout_ms) {
    msg_config_t config;
    msg::config_from_environment(&config, false);
    msg::log_set_level(config.debug != 0 ? MSG_LOG_DEBUG : config.log_level);
    msg::boot::CoordinatorLimits limits;
    limits.heartbeat_ms = msg::heartbeat_ms(config.timeout_ms, config.heartbeat_ms);
    *timeout_ms = config.timeout_ms;
    return limits;
}

struct Options {
    long n = 0, timeout_s = 0, join_ms = 30000, grace_s = 5;
    long failure_grace_s = -1;  // -1: from the ranks' timeout
    std::string serve, key_file;
    bool receive_memory = false, info = false, json = false, allow_no_join = false;
    std::string bind_to;  // "" (not given) is auto
    int program = 0;      // argv's index of PROGRAM
};

void add_options(CLI::App &app, Options &o) {
    app.description(kDescription);
    app.add_option("-n,--np", o.n, "number of ranks (1..4096)")->check(CLI::Range(1, 4096));
    app.add_option("--timeout", o.timeout_s,
                   "stop the job after this long: SIGTERM, then SIGKILL after the grace "
                   "period (exit status 124)")
        ->type_name("SECONDS")
        ->check(CLI::Range(1L, 86400L * 7));
    app.add_option("--grace", o.grace_s,
                   "time a rank has to exit after SIGTERM before SIGKILL (default 5; 0: "
                   "SIGKILL right after SIGTERM)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0, 86400));
    app.add_option("--failure-grace", o.failure_grace_s,
                   "after a rank fails, time the others have to end by themselves before they "
                   "are stopped as by SIGTERM (default: twice the ranks' timeout, "
                   "VIADUCT_TIMEOUT_MS, plus 5; at once if all that remain are stopped)")
        ->type_name("SECONDS")
        ->check(CLI::Range(0, 86400));
    app.add_option("--join-timeout", o.join_ms,
                   "time allowed for all ranks to join, from the first one's msg_init (default "
                   "30000); a rank stopped (SIGSTOP) for a third of it is reported failed to "
                   "its peers; ranks that exit 0 without all having joined in time make msgrun "
                   "exit 1")
        ->type_name("MS")
        ->check(CLI::Range(1, 86400000));
    app.add_flag("--allow-no-join", o.allow_no_join,
                 "the ranks need not join the job (programs that are not libmsg jobs): their "
                 "statuses alone decide msgrun's");
    app.add_option("--serve", o.serve, "coordinate a job started elsewhere")
        ->type_name("HOST:PORT");
    app.add_option("--key-file", o.key_file,
                   "with --serve: write the job key to PATH, a new file (mode 0600; an "
                   "existing file is refused)")
        ->type_name("PATH");
    app.add_option("--bind-to", o.bind_to,
                   "core: rank r runs on the r-th CPU msgrun may use only (round robin when "
                   "there are more ranks than CPUs), as mpirun's --bind-to core; none: the "
                   "ranks may run on every CPU msgrun may use; auto (default): core when "
                   "the ranks are no more than those CPUs, else none (as mpirun)")
        ->type_name("auto|core|none")
        ->check(CLI::IsMember({"auto", "core", "none"}));
    app.add_flag("--receive-memory", o.receive_memory,
                 "print the receive buffers of a job of N ranks (per rank and on one host, "
                 "with the VIADUCT_* settings here) and start nothing");
    app.add_flag("--info", o.info,
                 "print what the ranks would use here (as msg-info: settings, providers, "
                 "protocol table, receive memory of N ranks) and start nothing");
    app.add_flag("--json", o.json, "with --receive-memory or --info: one JSON object");
    app.footer(kFooter);
    // PROGRAM and its arguments are the rank's own: parsing stops at the first word that
    // is not msgrun's.
    app.prefix_command();
}

// Reads the options before PROGRAM. Returns -1 when msgrun goes on, else the status it
// exits with (0 after --help or --version, 2 for a usage error).
int parse_options(int argc, char **argv, Options &o) {
    CLI::App app;
    viaduct::cli::setup(app, "msgrun");
    add_options(app, o);
    if (int rc = viaduct::cli::parse(app, argc, argv); rc >= 0) return rc;
    const std::vector<std::string> rest = app.remaining();
    o.program = argc - static_cast<int>(rest.size());
    // A word after "--" is the program whatever it looks like; without it, an option
    // msgrun does not know is a mistake, not a program name.
    if (!rest.empty() && rest[0] == "--") {
        ++o.program;
    } else if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-') {
        viaduct::cli::usage_error("msgrun", "unknown option " + rest[0]);
        return viaduct::cli::exit_usage;
    }
    return -1;
}

// The options that only make sense together. Returns -1 when they do, else 2.
int check_options(const Options &o, int argc) {
    if (o.info && o.receive_memory) {
        viaduct::cli::usage_error("msgrun", "--info already holds the receive memory: give one");
        return 2;
    }
    if (o.json && !o.receive_memory && !o.info) {
        viaduct::cli::usage_error("msgrun", "--json goes with --receive-memory or --info");
        return 2;
    }
    if (o.info) return -1;
    if (o.n == 0) {
        viaduct::cli::usage_error("msgrun", "-n N is required");
        return 2;
    }
    if (o.receive_memory) return -1;
    if (o.serve.empty() && o.program >= argc) {
        viaduct::cli::usage_error("msgrun", "no program to run");
        return 2;
    }
    if (!o.key_file.empty() && o.serve.empty()) {
        viaduct::cli::usage_error("msgrun", "--key-file goes with --serve");
        return 2;
    }
    if (!o.bind_to.empty() && !o.serve.empty()) {
        viaduct::cli::usage_error("msgrun",
                                  "--bind-to goes with the ranks msgrun starts, not --serve");
        return 2;
    }
    return -1;
}

// What a job of n ranks' receive buffers take (msg_receive_memory), per rank
// and for n ranks on one host, against what this host has available. Fills
// *per_rank; false (said on stderr) when the settings are bad.
bool receive_memory(long n, size_t *per_rank, size_t *buffers) {
    msg_config_t config;
    msg::config_from_environment(&config, true);
    if (int rc = msg_receive_memory(&config, static_cast<int>(n), per_rank, buffers);
        rc != MSG_OK) {
        std::fprintf(stderr, "msgrun: the VIADUCT_* settings are not valid: %s\n",
                     msg_strerror(rc));
        return false;
    }
    return true;
}

// --receive-memory: prints the figures and starts nothing.
int print_receive_memory(const Options &o) {
    size_t per_rank = 0, buffers = 0;
    if (!receive_memory(o.n, &per_rank, &buffers)) return 1;
    const double host = static_cast<double>(per_rank) * static_cast<double>(o.n);
    const uint64_t available = viaduct::host_memory().usable();
    if (o.json) {
        nlohmann::json j = {{"ranks", o.n},
                            {"buffers_per_rank", buffers},
                            {"bytes_per_rank", per_rank},
                            {"bytes_on_one_host", static_cast<uint64_t>(host)},
                            {"host_available_bytes", available}};
        std::printf("%s\n", j.dump().c_str());
        return 0;
    }
    std::printf(
        "receive buffers for %ld ranks: %zu per rank, %s per rank, %s for all %ld on one "
        "host (%s available here)\n",
        o.n, buffers, viaduct::mib(static_cast<double>(per_rank)).c_str(),
        viaduct::mib(host).c_str(), o.n, viaduct::mib(static_cast<double>(available)).c_str());
    return 0;
}

// --info: runs msg-info, installed (and built) beside msgrun, for a job of N ranks. msgrun
// itself never loads libfabric (see libmsg/meson.build), which the report needs.
int print_info(const Options &o, const char *argv0) {
    std::string exe = viaduct::self_exe();
    if (exe.empty()) exe = argv0;
    const std::string info = exe.substr(0, exe.rfind('/') + 1) + "msg-info";
    std::vector<std::string> args = {info};
    if (o.n > 0) args.insert(args.end(), {"-n", std::to_string(o.n)});
    if (o.json) args.push_back("--json");
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(info.c_str(), argv.data());
    std::fprintf(stderr, "msgrun: --info runs %s: %s\n", info.c_str(), std::strerror(errno));
    return 1;
}

// The job's exit status once every rank has ended: the ranks' own, except that ranks that all
// exited 0 did not run the job when not every rank joined within --join-timeout, or when a rank
// that joined ended without msg_finalize (its peers saw it fail); both are exit 1.
int job_status(const Options &o, const msg::boot::Coordinator &coord, int exit_code, bool settled) {
    if (exit_code != 0) return exit_code;
    if (coord.join_timed_out()) {
        std::fprintf(stderr,
                     "msgrun: the job never started: not every rank joined within --join-timeout "
                     "(%ld ms) of the first; exit 1\n",
                     o.join_ms);
        return 1;
    }
    if (!settled) return 0;
    const auto list = [](const std::vector<int> &ranks) {
        std::string text = ranks.size() > 1 ? "ranks " : "rank ";
        for (size_t i = 0; i < ranks.size(); ++i)
            text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
        return text;
    };
    if (!coord.never_joined().empty() && !o.allow_no_join) {
        std::fprintf(stderr,
                     "msgrun: %s never joined the job (exited without msg_init); exit 1 "
                     "(--allow-no-join runs programs that are not libmsg jobs)\n",
                     list(coord.never_joined()).c_str());
        return 1;
    }
    if (coord.left_without_finalize().empty()) return 0;
    const bool many = coord.left_without_finalize().size() > 1;
    std::fprintf(stderr,
                 "msgrun: %s exited 0 without msg_finalize (the others saw %s fail); exit 1\n",
                 list(coord.left_without_finalize()).c_str(), many ? "them" : "it");
    return 1;
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

// --bind-to core: rank r's CPU set holds the (r mod k)-th of the k CPUs msgrun may use.
// Empty for --bind-to none, for auto with more ranks than those CPUs, or when msgrun's own
// CPUs cannot be read (said on stderr).
std::vector<cpu_set_t> rank_cpus(const Options &o) {
    if (o.bind_to == "none") return {};
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
        std::perror("msgrun: binding: sched_getaffinity (the ranks are not bound)");
        return {};
    }
    std::vector<int> usable;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mine)) usable.push_back(c);
    const bool automatic = o.bind_to.empty() || o.bind_to == "auto";
    if (automatic && o.n > static_cast<long>(usable.size())) return {};
    std::vector<cpu_set_t> sets(static_cast<size_t>(o.n));
    for (size_t r = 0; r < sets.size(); ++r) {
        CPU_ZERO(&sets[r]);
        CPU_SET(usable[r % usable.size()], &sets[r]);
    }
    return sets;
}

// Starts the ranks on this machine, each told where the coordinator listens
// and the job's key, and waits for them all.
int run_local_job(const Options &o, char **argv, msg::boot::Coordinator &coord,
                  const msg::boot::JobKey &key, const std::string &host, int rank_timeout_ms) {
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
    if (!supervisor->launch(argv + o.program, env, rank_cpus(o), &error)) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 1;
    }
    const long linger_s = o.failure_grace_s >= 0
                              ? o.failure_grace_s
                              : 2 * ((rank_timeout_ms + 999) / 1000) + kFailureMarginS;
    supervisor->on_failure(linger_s, (o.join_ms + 999) / 1000 / 3 + 1,
                           [&](int rank) { coord.report_failure(rank); });
    int exit_code = supervisor->wait([&](int rank, pid_t pid, int) {
        remove_shm_regions(pid);
        // A rank that left in order is not a failure; the coordinator knows.
        coord.report_failure(rank);
    });
    // Every rank has ended and been reported: the coordinator ends by itself once it has read
    // what they sent last (their Byes). Only then does it know who left in order.
    const auto settle_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!coord.finished() && std::chrono::steady_clock::now() < settle_by)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const bool settled = coord.finished();
    coord.stop();
    coord.join();
    return job_status(o, coord, exit_code, settled);
}

}  // namespace

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("msgrun");
    Options o;
    int rc = parse_options(argc, argv, o);
    if (rc < 0) rc = check_options(o, argc);
    if (rc >= 0) return rc;
    if (o.receive_memory) return print_receive_memory(o);
    if (o.info) return print_info(o, argv[0]);
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
    int rank_timeout_ms = 0;
    auto coord = msg::boot::Coordinator::listen(host, port, static_cast<int>(o.n),
                                                static_cast<int>(o.join_ms), key, &error,
                                                coordinator_limits(&rank_timeout_ms));
    if (!coord) {
        std::fprintf(stderr, "msgrun: %s\n", error.c_str());
        return 1;
    }
    if (!o.serve.empty()) return serve_job(o, *coord, key, key_from_env, host);
    return run_local_job(o, argv, *coord, key, host, rank_timeout_ms);
}
