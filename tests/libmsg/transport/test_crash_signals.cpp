// A program linked with libmsg dies by the signal that killed it: the PSM
// libraries libfabric loads install handlers that turn a crash or a kill
// into "exit status 1" plus a *.btr file; libmsg must take them out again,
// and leave the application's own handlers alone.
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "msg/msg.h"
#include "transport/ofi/psm_signals.hpp"
#include "transport/transport.hpp"

namespace {

extern "C" char **environ;

// A fresh directory for the child to run in, removed with what is in it.
class ScratchDir {
  public:
    ScratchDir() {
        const char *tmp = std::getenv("TMPDIR");
        std::string templ =
            std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/viaduct-crash-XXXXXX";
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back('\0');
        REQUIRE(mkdtemp(buf.data()) != nullptr);
        path_ = buf.data();
    }
    ~ScratchDir() {
        for (const std::string &f : files()) unlink((path_ + "/" + f).c_str());
        rmdir(path_.c_str());
    }
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;

    const std::string &path() const { return path_; }
    std::vector<std::string> files() const {
        std::vector<std::string> out;
        DIR *d = opendir(path_.c_str());
        if (d == nullptr) return out;
        while (dirent *e = readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
                out.emplace_back(e->d_name);
        closedir(d);
        return out;
    }

  private:
    std::string path_;
};

struct Death {
    bool signaled = false;
    int signal = 0;
    int exit_status = -1;
    std::string output;
};

// The child's environment: ours without a job to join, and with the
// sanitizers told to leave fatal signals to the program (their own reports
// are not what is tested here).
std::vector<std::string> child_env() {
    std::vector<std::string> env;
    for (char **e = environ; *e != nullptr; ++e) {
        std::string v = *e;
        if (v.rfind("VIADUCT_", 0) == 0 || v.rfind("PMIX_", 0) == 0 ||
            v.rfind("ASAN_OPTIONS=", 0) == 0 || v.rfind("TSAN_OPTIONS=", 0) == 0)
            continue;
        env.push_back(v);
    }
    const char *quiet =
        "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigill=0:"
        "handle_sigfpe=0:detect_leaks=0";
    env.push_back(std::string("ASAN_OPTIONS=") + quiet);
    env.push_back(std::string("TSAN_OPTIONS=") + quiet);
    return env;
}

// Runs the crash child in dir with `how`; once it has printed "ready",
// sends it `kill_with` (0: nothing), then reaps it.
Death run_child(const ScratchDir &dir, const char *how, int kill_with) {
    const char *exe = std::getenv("VIADUCT_CRASH_CHILD");
    REQUIRE(exe != nullptr);
    std::vector<std::string> env = child_env();
    std::vector<char *> envp;
    for (std::string &v : env) envp.push_back(v.data());
    envp.push_back(nullptr);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (chdir(dir.path().c_str()) != 0) _exit(120);
        char *argv[] = {const_cast<char *>(exe), const_cast<char *>(how), nullptr};
        execve(exe, argv, envp.data());
        _exit(121);
    }
    close(fds[1]);
    Death d;
    char buf[256];
    bool signalled = false;
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        d.output.append(buf, static_cast<size_t>(n));
        if (!signalled && kill_with != 0 && d.output.find("ready\n") != std::string::npos) {
            kill(pid, kill_with);
            signalled = true;
        }
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    d.signaled = WIFSIGNALED(status);
    d.signal = d.signaled ? WTERMSIG(status) : 0;
    d.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return d;
}

void expect_death_by(const char *how, int kill_with, int expected) {
    ScratchDir dir;
    Death d = run_child(dir, how, kill_with);
    INFO("child '" << how << "' output:\n" << d.output);
    INFO("exit status " << d.exit_status << ", signal " << d.signal);
    REQUIRE(d.output.find("ready\n") != std::string::npos);
    CHECK(d.signaled);
    CHECK(d.signal == expected);
    // No backtrace file (nor anything else) left where it ran.
    std::string left;
    for (const std::string &f : dir.files()) left += " " + f;
    INFO("files left:" << left);
    CHECK(left.empty());
}

extern "C" void own_handler(int) {}

}  // namespace

TEST_CASE("a libmsg program that crashes dies by its signal, leaving no backtrace file",
          "[crash_signals]") {
    SECTION("SIGSEGV") {
        expect_death_by("segv", 0, SIGSEGV);
    }
    SECTION("abort") {
        expect_death_by("abort", 0, SIGABRT);
    }
    SECTION("SIGBUS") {
        expect_death_by("bus", 0, SIGBUS);
    }
}

TEST_CASE("a libmsg program killed by SIGTERM or SIGINT dies by it", "[crash_signals]") {
    SECTION("SIGTERM") {
        expect_death_by("wait", SIGTERM, SIGTERM);
    }
    SECTION("SIGINT") {
        expect_death_by("wait", SIGINT, SIGINT);
    }
}

TEST_CASE("libfabric loaded at run time keeps the application's handlers and none of PSM's",
          "[crash_signals]") {
    // libmsg loads libfabric on first use (fabric_library.hpp), after this program installed
    // its own handler; where Debian's libfabric brings PSM in, PSM's constructor runs then.
    struct sigaction mine {
    }, saved{}, after{};
    mine.sa_handler = own_handler;
    sigemptyset(&mine.sa_mask);
    REQUIRE(sigaction(SIGTERM, &mine, &saved) == 0);
    const std::string version = msg::ofi_version();
    INFO("libfabric " << version);
    void *fabric = dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD);
    REQUIRE(fabric != nullptr);
    dlclose(fabric);
    if (dlopen("libinfinipath.so.4", RTLD_LAZY | RTLD_NOLOAD) == nullptr)
        WARN("no PSM library in this process: only the application's handlers are checked");
    for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGINT, SIGTERM}) {
        struct sigaction now {};
        REQUIRE(sigaction(sig, nullptr, &now) == 0);
        INFO("signal " << sig);
        CHECK_FALSE(msg::handler_is_psm(now));
    }
    REQUIRE(sigaction(SIGTERM, &saved, &after) == 0);
    CHECK(after.sa_handler == own_handler);
    CHECK(msg::restore_psm_signal_defaults() == 0);
}
