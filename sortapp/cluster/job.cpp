// `sortapp run` and `sortapp job` (see job.hpp).
#include "job.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "node.hpp"
#include "options.hpp"
#include "sortapp/memory_budget.hpp"

namespace sortapp::cluster {

namespace {

// libmsg reads its choices from VIADUCT_* variables.
void export_fabric_options(const JobOptions &o) {
    if (!o.provider.empty()) setenv("VIADUCT_PROVIDER", o.provider.c_str(), 1);
    if (!o.protocol.empty()) setenv("VIADUCT_PROTOCOL", o.protocol.c_str(), 1);
    if (o.restricted >= 0) setenv("VIADUCT_RESTRICTED", o.restricted ? "1" : "0", 1);
}

std::string self_exe() {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    buf[n] = '\0';
    return buf;
}

bool executable(const std::string &p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }

// msgrun: $VIADUCT_MSGRUN, beside this program, in the build tree, or on PATH.
std::string find_msgrun(const std::string &exe) {
    if (const char *e = std::getenv("VIADUCT_MSGRUN"); e != nullptr && executable(e)) return e;
    std::string dir = exe.substr(0, exe.rfind('/'));
    for (const std::string &c : {dir + "/msgrun", dir + "/../libmsg/tools/msgrun"})
        if (executable(c)) return c;
    if (const char *path = std::getenv("PATH")) {
        std::string p = path;
        for (size_t at = 0; at <= p.size();) {
            size_t colon = p.find(':', at);
            std::string d = p.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
            if (executable(d + "/msgrun")) return d + "/msgrun";
            if (colon == std::string::npos) break;
            at = colon + 1;
        }
    }
    return {};
}

}  // namespace

int run_main(int argc, char **argv) {
    JobOptions o;
    int code = 0;
    if (!parse_job_options(argc, argv, true, o, &code)) return code;
    // Every input is checked before anything starts: a missing or truncated
    // partition is reported here, not halfway through the sort.
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
        } else if (expand(o.output, r) == in) {
            std::fprintf(stderr, "sortapp run: node %d's output is its input (%s)\n", r, in.c_str());
            bad = true;
        }
    }
    if (bad) return 2;
    std::vector<std::string> args = o.forwarded;
    if (o.params.memory_budget == 0) {
        // N nodes share this machine's memory.
        uint64_t share = default_memory_budget().budget / static_cast<uint64_t>(o.nodes);
        args.push_back("--memory");
        args.push_back(std::to_string(share));
    }
    const std::string exe = self_exe();
    const std::string msgrun = find_msgrun(exe);
    if (msgrun.empty()) {
        std::fprintf(stderr, "sortapp run: cannot find msgrun (set VIADUCT_MSGRUN)\n");
        return 1;
    }
    std::vector<std::string> cmd = {msgrun, "-n", std::to_string(o.nodes + 1), "--timeout",
                                    std::to_string(o.timeout_s), "--", exe, "job"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    std::vector<char *> cargv;
    for (std::string &s : cmd) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
        std::perror("sortapp run: fork");
        return 1;
    }
    if (pid == 0) {
        execv(cargv[0], cargv.data());
        std::perror("sortapp run: exec msgrun");
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int job_main(int argc, char **argv) {
    JobOptions o;
    int code = 0;
    if (!parse_job_options(argc, argv, false, o, &code)) return code;
    export_fabric_options(o);
    msg_context_t *msg = nullptr;
    int rc = msg_init(nullptr, &msg);
    if (rc != MSG_OK) {
        std::fprintf(stderr, "sortapp job: joining the job: %s\n", msg_strerror(rc));
        return 1;
    }
    int rank = 0, size = 0;
    msg_rank(msg, &rank);
    msg_size(msg, &size);
    if (size < 2) {
        std::fprintf(stderr, "sortapp job: needs at least 2 processes (nodes + the monitor), "
                             "got %d\n", size);
        msg_destroy(msg);
        return 2;
    }
    const int monitor = size - 1;
    code = rank == monitor ? monitor_main(o, msg, monitor) : node_main(o, msg, rank, monitor);
    rc = msg_finalize(msg);
    if (rc != MSG_OK && code == 0) code = 1;
    msg_destroy(msg);
    return code;
}

}  // namespace sortapp::cluster
