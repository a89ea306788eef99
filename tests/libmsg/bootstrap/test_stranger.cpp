// A stranger (another user, with the documented VIADUCT_COORDINATOR, RANK and
// SIZE but without the job's key, or with a wrong one) knocks on a live job's
// coordinator: it is refused with a clear error, and the job finishes intact.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/job_key.hpp"

using Clock = std::chrono::steady_clock;

namespace {

int slowdown() {
    const char *s = std::getenv("VIADUCT_TEST_SLOWDOWN");
    return s != nullptr && std::atoi(s) > 0 ? std::atoi(s) : 1;
}

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Starts argv with exactly env as its environment, output to log.
pid_t spawn(const std::vector<std::string> &argv, const std::vector<std::string> &env,
            const std::string &log) {
    std::fflush(nullptr);  // nothing buffered here is written twice
    pid_t pid = fork();
    if (pid == 0) {
        FILE *out = std::freopen(log.c_str(), "w", stdout);
        if (out != nullptr) dup2(fileno(stdout), STDERR_FILENO);
        std::vector<char *> args, envp;
        for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        for (const auto &e : env) envp.push_back(const_cast<char *>(e.c_str()));
        envp.push_back(nullptr);
        execve(args[0], args.data(), envp.data());
        _exit(127);
    }
    return pid;
}

// Exit status of pid (128+signal), killing it past the deadline.
int finish(pid_t pid, Clock::time_point deadline) {
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (Clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits until every needle is in the file at path; false at the deadline.
bool wait_for_lines(const std::string &path, const std::vector<std::string> &needles,
                    Clock::time_point deadline) {
    for (;;) {
        std::string text = slurp(path);
        bool all = true;
        for (const auto &n : needles) all = all && text.find(n) != std::string::npos;
        if (all) return true;
        if (Clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// The environment every process of these tests starts with.
std::vector<std::string> base_env() {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
    for (const char *keep : {"VIADUCT_PROVIDER", "VIADUCT_TEST_SLOWDOWN", "LSAN_OPTIONS"})
        if (const char *v = std::getenv(keep)) env.push_back(std::string(keep) + "=" + v);
    return env;
}

// The prefix that runs a command as another user where the test can switch
// users (root in CI), else as this one.
std::vector<std::string> as_stranger() {
    if (getuid() != 0) return {};
    return {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
}

}  // namespace

TEST_CASE("a stranger without the job key is refused and the job finishes", "[boot_stranger]") {
    const std::string msgrun = std::getenv("VIADUCT_MSGRUN");
    const std::string worker = std::getenv("VIADUCT_STRANGER_WORKER");
    char tmpl[] = "/tmp/viaduct-stranger-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    ::chmod(dir.c_str(), 0755);  // the stranger writes nothing here, but may look
    const std::string gate = dir + "/gate", job_log = dir + "/job.log";
    const auto deadline = Clock::now() + std::chrono::seconds(120 * slowdown());

    const std::vector<std::string> env = base_env();
    pid_t job =
        spawn({msgrun, "-n", "2", "--timeout", std::to_string(120 * slowdown()), worker, gate}, env,
              job_log);
    REQUIRE(wait_for_lines(job_log, {"[rank 0] joined", "[rank 1] joined"}, deadline));
    // The job is live and every rank waits for the gate: learn the
    // coordinator's address as a stranger could (here, from the job's output).
    std::string text = slurp(job_log);
    size_t at = text.find("coordinator ");
    REQUIRE(at != std::string::npos);
    std::string address = text.substr(at + 12, text.find('\n', at) - at - 12);
    INFO("coordinator " << address);

    INFO((getuid() == 0 ? "stranger runs as nobody" : "not root: stranger runs as this user"));

    struct Attempt {
        const char *what;
        std::string key_var;
        const char *error;
    };
    for (const Attempt &a :
         {Attempt{"no key", "", "job key missing"},
          Attempt{"a wrong key",
                  "VIADUCT_JOB_KEY=" + msg::boot::key_to_hex(msg::boot::make_job_key()),
                  "refused rank 1: wrong job key"}}) {
        INFO("a stranger with " << a.what);
        std::vector<std::string> argv = as_stranger();
        argv.push_back(worker);
        argv.push_back(dir + "/never");
        std::vector<std::string> senv = env;
        senv.push_back("VIADUCT_COORDINATOR=" + address);
        senv.push_back("VIADUCT_RANK=1");
        senv.push_back("VIADUCT_SIZE=2");
        if (!a.key_var.empty()) senv.push_back(a.key_var);
        const std::string log = dir + "/stranger.log";
        int status = finish(spawn(argv, senv, log), deadline);
        std::string out = slurp(log);
        INFO("stranger exited " << status << ":\n" << out);
        CHECK(status != 0);
        CHECK(out.find("[stranger] FAIL msg_init") != std::string::npos);
        CHECK(out.find(a.error) != std::string::npos);
        CHECK(out.find("] joined,") == std::string::npos);
    }
    // The coordinator named the refused connection.
    CHECK(wait_for_lines(job_log, {"refused a connection from 127.0.0.1:", "wrong job key"},
                         deadline));

    std::ofstream(gate).put('\n');
    int status = finish(job, deadline);
    text = slurp(job_log);
    INFO("msgrun exited " << status << ":\n" << text);
    CHECK(status == 0);
    CHECK(text.find("[rank 0] PASS stranger") != std::string::npos);
    CHECK(text.find("[rank 1] PASS stranger") != std::string::npos);
    CHECK(text.find("FAIL exchange") == std::string::npos);
    std::remove(gate.c_str());
    std::remove(job_log.c_str());
    std::remove((dir + "/stranger.log").c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("a stranger claiming a rank that has not joined yet does not take its slot",
          "[boot_stranger]") {
    const std::string msgrun = std::getenv("VIADUCT_MSGRUN");
    const std::string worker = std::getenv("VIADUCT_STRANGER_WORKER");
    char tmpl[] = "/tmp/viaduct-stranger-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    ::chmod(dir.c_str(), 0755);
    const std::string gate = dir + "/gate", key_file = dir + "/key";
    const auto deadline = Clock::now() + std::chrono::seconds(120 * slowdown());
    const std::vector<std::string> env = base_env();

    pid_t coord = spawn({msgrun, "-n", "3", "--serve", "127.0.0.1:0", "--key-file", key_file,
                         "--timeout", std::to_string(120 * slowdown())},
                        env, dir + "/coordinator.log");
    REQUIRE(wait_for_lines(dir + "/coordinator.log", {"coordinating 3 ranks on "}, deadline));
    std::string text = slurp(dir + "/coordinator.log");
    size_t at = text.find(" on ") + 4;
    const std::string address = text.substr(at, text.find('\n', at) - at);
    INFO("coordinator " << address);
    struct stat st {};
    REQUIRE(::stat(key_file.c_str(), &st) == 0);  // written before msgrun says it listens
    CHECK((st.st_mode & 0777) == 0600);

    auto rank_env = [&](int r) {
        std::vector<std::string> e = env;
        e.push_back("VIADUCT_COORDINATOR=" + address);
        e.push_back("VIADUCT_RANK=" + std::to_string(r));
        e.push_back("VIADUCT_SIZE=3");
        return e;
    };
    std::vector<pid_t> ranks;
    for (int r = 0; r < 2; ++r) {
        auto e = rank_env(r);
        e.push_back("VIADUCT_JOB_KEY_FILE=" + key_file);
        ranks.push_back(spawn({worker, gate}, e, dir + "/rank" + std::to_string(r) + ".log"));
    }
    // Rank 2 has not started: a stranger with a wrong key claims its slot.
    {
        std::vector<std::string> argv = as_stranger();
        argv.push_back(worker);
        argv.push_back(dir + "/never");
        auto e = rank_env(2);
        e.push_back("VIADUCT_JOB_KEY=" + msg::boot::key_to_hex(msg::boot::make_job_key()));
        int status = finish(spawn(argv, e, dir + "/stranger.log"), deadline);
        std::string out = slurp(dir + "/stranger.log");
        INFO("stranger exited " << status << ":\n" << out);
        CHECK(status != 0);
        CHECK(out.find("refused rank 2: wrong job key") != std::string::npos);
    }
    // The real rank 2 still finds its slot free.
    {
        auto e = rank_env(2);
        e.push_back("VIADUCT_JOB_KEY_FILE=" + key_file);
        ranks.push_back(spawn({worker, gate}, e, dir + "/rank2.log"));
    }
    for (int r = 0; r < 3; ++r)
        REQUIRE(wait_for_lines(dir + "/rank" + std::to_string(r) + ".log",
                               {"[rank " + std::to_string(r) + "] joined"}, deadline));
    std::ofstream(gate).put('\n');
    for (int r = 0; r < 3; ++r) {
        int status = finish(ranks[static_cast<size_t>(r)], deadline);
        std::string out = slurp(dir + "/rank" + std::to_string(r) + ".log");
        INFO("rank " << r << " exited " << status << ":\n" << out);
        CHECK(status == 0);
        CHECK(out.find("PASS stranger") != std::string::npos);
    }
    int status = finish(coord, deadline);
    INFO("coordinator:\n" << slurp(dir + "/coordinator.log"));
    CHECK(status == 0);
    CHECK(slurp(dir + "/coordinator.log").find("wrong job key") != std::string::npos);
    std::filesystem::remove_all(dir);
}
