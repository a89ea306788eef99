// `sortapp run` and `sortapp job` (see job.hpp); the job's processes are job_process.cpp.
#include "job.hpp"

#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "node.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "sortapp/cleanup.hpp"
#include "sortapp/memory_budget.hpp"
#include "viaduct/counters.hpp"
#include "viaduct/env.hpp"
#include "viaduct/path.hpp"

namespace sortapp::cluster {

namespace {

bool executable(const std::string &p) {
    return !p.empty() && access(p.c_str(), X_OK) == 0;
}

// A program of the project: $VARIABLE, beside this program, in the build tree (at `built`,
// relative to this program's directory), or on PATH.
std::string find_program(const std::string &exe, const char *variable, const std::string &name,
                         const std::string &built) {
    if (const char *e = viaduct::env::get(variable); e != nullptr && executable(e)) return e;
    const std::string dir = viaduct::path_dir(exe);
    for (const std::string &c : {dir + "/" + name, dir + "/" + built})
        if (executable(c)) return c;
    if (const char *path = viaduct::env::get("PATH")) {
        std::string p = path;
        for (size_t at = 0; at <= p.size();) {
            size_t colon = p.find(':', at);
            std::string d =
                p.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
            if (executable(d + "/" + name)) return d + "/" + name;
            if (colon == std::string::npos) break;
            at = colon + 1;
        }
    }
    return {};
}

std::string find_msgrun(const std::string &exe) {
    return find_program(exe, "VIADUCT_MSGRUN", "msgrun", "../libmsg/tools/msgrun");
}

std::string find_job_program(const std::string &exe) {
    return find_program(exe, "VIADUCT_SORTAPP_JOB", "sortapp-job", "sortapp-job");
}

volatile sig_atomic_t g_msgrun = 0;

std::string random_job_id() {
    unsigned char b[6] = {};
    if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
        const auto pid = static_cast<unsigned>(getpid());
        std::memcpy(b, &pid, sizeof pid);
    }
    char hex[13];
    for (size_t i = 0; i < sizeof b; ++i) std::snprintf(hex + 2 * i, 3, "%02x", b[i]);
    return hex;
}

// The files a job with this id would leave if its processes were killed: each node's job
// directory and temporary outputs (named with the job's id).
std::vector<std::string> job_files(const JobOptions &o) {
    std::vector<std::string> found;
    std::error_code ec;
    for (int r = 0; r < o.nodes; ++r) {
        const std::string out = expand(o.output, r);
        const auto [dir, base] = split_path(out);
        const std::string scratch = o.scratch.empty() ? dir : expand(o.scratch, r);
        const std::string job_dir = scratch + "/.sortapp-job-" + o.job_id + "-" + std::to_string(r);
        if (std::filesystem::exists(job_dir, ec)) found.push_back(job_dir);
        const std::string temp_prefix = "." + base + ".sortapp-" + o.job_id + "-";
        for (const auto &e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().filename().string().rfind(temp_prefix, 0) == 0)
                found.push_back(e.path().string());
    }
    return found;
}

// What the job's paths held before it started, so that only what it created is removed.
struct Before {
    std::vector<PathId> outputs;
    std::vector<std::string> job_files;  // a --job-id reused from an earlier job
};

// After a failed job: what its processes could not remove themselves (a node killed by
// SIGKILL) — its job directories, its temporary outputs, and outputs it put in place (a file
// at an output path that was not there before the job, or is a different file now). Nothing
// that was there before the job is touched.
int remove_leftovers(const JobOptions &o, const Before &before) {
    int removed = 0;
    std::error_code ec;
    for (const std::string &f : job_files(o))
        if (std::find(before.job_files.begin(), before.job_files.end(), f) ==
                before.job_files.end() &&
            std::filesystem::remove_all(f, ec) > 0)
            ++removed;
    for (int r = 0; r < o.nodes; ++r) {
        const std::string out = expand(o.output, r);
        const PathId now = path_id(out);
        const PathId &was = before.outputs[static_cast<size_t>(r)];
        if (now.exists && (!was.exists || now.dev != was.dev || now.ino != was.ino) &&
            std::filesystem::remove(out, ec))
            ++removed;
    }
    return removed;
}

// SIGINT, SIGTERM and SIGHUP go to msgrun, which passes them to every process of the job.
void forward_signal(int sig) {
    if (g_msgrun <= 0) return;
    kill(static_cast<pid_t>(g_msgrun), sig);
    kill(static_cast<pid_t>(g_msgrun), SIGCONT);  // a stopped msgrun must act on it
}

// Waits for msgrun to end. A msgrun stopped (SIGSTOP, a frozen terminal job) for longer than
// the stall timeout cannot run the job any more: it is killed, and the job's processes follow
// it through their parent-death signal.
int wait_for_msgrun(pid_t pid, int stall_ms) {
    using clock = std::chrono::steady_clock;
    clock::time_point stopped_at{};
    bool stopped = false;
    for (;;) {
        int status = 0;
        pid_t got = waitpid(pid, &status, WNOHANG | WUNTRACED | WCONTINUED);
        if (got == pid && (WIFEXITED(status) || WIFSIGNALED(status))) return status;
        if (got == pid && WIFSTOPPED(status) && !stopped) {
            stopped = true;
            stopped_at = clock::now();
        } else if (got == pid && WIFCONTINUED(status)) {
            stopped = false;
        } else if (got < 0 && errno != EINTR) {
            return 1 << 8;
        }
        if (stopped && clock::now() - stopped_at > std::chrono::milliseconds(stall_ms)) {
            std::fprintf(stderr, "sortapp run: msgrun has been stopped for %d s; ending the job\n",
                         stall_ms / 1000);
            kill(pid, SIGKILL);
            stopped = false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// Every input is checked before anything starts: a missing or truncated partition is reported
// here, not halfway through the sort; and any alias of an input, on any node, is refused.
bool inputs_usable(const JobOptions &o) {
    bool bad = false;
    for (int r = 0; r < o.nodes; ++r) {
        std::string in = expand(o.input, r);
        struct stat st;
        if (stat(in.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
            std::fprintf(stderr, "sortapp run: input of node %d, %s: missing or not a file\n", r,
                         in.c_str());
            bad = true;
        } else if (static_cast<uint64_t>(st.st_size) % o.params.record_size != 0) {
            std::fprintf(stderr,
                         "sortapp run: input of node %d, %s: %lld bytes is not a whole number of "
                         "%llu-byte records (truncated?)\n",
                         r, in.c_str(), static_cast<long long>(st.st_size),
                         static_cast<unsigned long long>(o.params.record_size));
            bad = true;
        }
    }
    for (Status s : {check_job_paths(o, o.nodes), check_timeline_dir(o, o.nodes)}) {
        if (s) continue;
        std::fprintf(stderr, "sortapp run: %s\n", s.message().c_str());
        bad = true;
    }
    return !bad;
}

// Starts msgrun (cmd) as a child that ends if this process dies, passes it SIGINT, SIGTERM
// and SIGHUP, and waits for it: its wait status, or -1 if it could not start.
int run_msgrun(std::vector<std::string> cmd, int stall_ms) {
    std::vector<char *> cargv;
    for (std::string &s : cmd) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    struct sigaction sa {};
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        std::perror("sortapp run: fork");
        return -1;
    }
    if (pid == 0) {
        // msgrun ends the job if this process dies, however it dies.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
        execv(cargv[0], cargv.data());
        std::perror("sortapp run: exec msgrun");
        _exit(127);
    }
    g_msgrun = pid;
    return wait_for_msgrun(pid, stall_ms);
}

}  // namespace

int run_main(int argc, char **argv) {
    const int64_t launched = viaduct::process_started_realtime_us();
    JobOptions o;
    int code = 0;
    if (!parse_job_options(argc, argv, true, o, &code)) return code;
    if (!inputs_usable(o)) return 2;
    std::vector<std::string> args = o.forwarded;
    if (launched > 0) args.push_back("--launched-at-us=" + std::to_string(launched));
    if (o.job_id.empty()) {
        o.job_id = random_job_id();
        args.push_back("--job-id");
        args.push_back(o.job_id);
    }
    Before before;
    for (int r = 0; r < o.nodes; ++r) before.outputs.push_back(path_id(expand(o.output, r)));
    before.job_files = job_files(o);
    if (o.params.memory_budget == 0) {
        // N nodes share this machine's memory.
        uint64_t share = default_memory_budget().budget / static_cast<uint64_t>(o.nodes);
        args.push_back("--memory");
        args.push_back(std::to_string(share));
    }
    const std::string exe = viaduct::self_exe();
    const std::string msgrun = find_msgrun(exe);
    if (msgrun.empty()) {
        std::fprintf(stderr, "sortapp run: cannot find msgrun (set VIADUCT_MSGRUN)\n");
        return 1;
    }
    const std::string job = find_job_program(exe);
    if (job.empty()) {
        std::fprintf(stderr, "sortapp run: cannot find sortapp-job (set VIADUCT_SORTAPP_JOB)\n");
        return 1;
    }
    std::vector<std::string> cmd = {msgrun,
                                    "-n",
                                    std::to_string(o.nodes + 1),
                                    "--timeout",
                                    std::to_string(o.timeout_s),
                                    "--bind-to",
                                    o.bind_to,
                                    "--",
                                    job};
    cmd.insert(cmd.end(), args.begin(), args.end());
    const int status = run_msgrun(cmd, o.stall_ms);
    if (status < 0) return 1;
    code = WIFEXITED(status) ? WEXITSTATUS(status)
                             : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (code == kExitTimelineFailed) {
        // The monitor said why; the job's outputs are complete and stay.
        std::fprintf(stderr, "sortapp run: the sort succeeded, but not its timeline\n");
    } else if (code != 0) {
        int removed = remove_leftovers(o, before);
        std::fprintf(
            stderr, "sortapp run: the job failed (msgrun %s %d)%s\n",
            WIFEXITED(status) ? "exit status" : "killed by signal",
            WIFEXITED(status) ? code : code - 128,
            removed > 0
                ? ("; removed " + std::to_string(removed) + " file(s) its processes left").c_str()
                : "");
    }
    return code;
}

int exec_job(int argc, char **argv) {
    const std::string job = find_job_program(viaduct::self_exe());
    if (job.empty()) {
        std::fprintf(stderr, "sortapp job: cannot find sortapp-job (set VIADUCT_SORTAPP_JOB)\n");
        return 1;
    }
    std::vector<char *> args(argv, argv + argc);
    args[0] = const_cast<char *>(job.c_str());
    args.push_back(nullptr);
    ::execv(job.c_str(), args.data());
    std::fprintf(stderr, "sortapp job: cannot start %s: %s\n", job.c_str(), std::strerror(errno));
    return 1;
}

}  // namespace sortapp::cluster
