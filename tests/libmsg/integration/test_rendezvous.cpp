// Jobs started without msgrun's launcher, as ssh or a scheduler would start them: every rank
// gets VIADUCT_COORDINATOR, VIADUCT_RANK, VIADUCT_SIZE and the job key, and the coordinator is
// either rank 0 itself (VIADUCT_COORDINATOR_HOST=1) or a separate `msgrun --serve`.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launcher.hpp"

namespace {

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

struct Proc {
    pid_t pid = -1;
    std::string log;
};

// Starts argv with extra environment, output to a fresh log file.
Proc spawn(const std::vector<std::string> &argv,
           const std::vector<std::pair<std::string, std::string>> &env, const std::string &log) {
    Proc p;
    p.log = log;
    p.pid = fork();
    if (p.pid == 0) {
        for (const auto &[k, v] : env) setenv(k.c_str(), v.c_str(), 1);
        FILE *out = std::freopen(log.c_str(), "w", stdout);
        if (out != nullptr) dup2(fileno(stdout), STDERR_FILENO);
        std::vector<char *> args;
        for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    return p;
}

// Waits for p, killing it after the deadline. Returns its exit status (128+signal if killed).
int finish(const Proc &p, std::chrono::steady_clock::time_point deadline) {
    int status = 0;
    while (waitpid(p.pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(p.pid, SIGKILL);
            waitpid(p.pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A job key as msgrun makes one: 64 hex digits.
std::string make_key() {
    std::ifstream urandom("/dev/urandom", std::ios::binary);
    std::string hex;
    for (int i = 0; i < 32; ++i) {
        char b = 0;
        urandom.get(b);
        static const char digits[] = "0123456789abcdef";
        hex += digits[(static_cast<unsigned char>(b) >> 4) & 15];
        hex += digits[static_cast<unsigned char>(b) & 15];
    }
    return hex;
}

// Runs `ranks` workers of `scenario` against the coordinator at 127.0.0.1:port. Each rank finds
// the key in VIADUCT_JOB_KEY, or in the file key_file names when it is not empty.
void run_ranks(int ranks, int port, bool rank0_hosts, const std::string &provider,
               const std::string &key, const std::string &key_file = "",
               std::vector<Proc> extra = {}) {
    const std::string worker = std::getenv("VIADUCT_TEST_WORKER");
    const std::string dir = "/tmp/viaduct-rendezvous-" + std::to_string(getpid());
    std::vector<Proc> procs;
    for (int r = 0; r < ranks; ++r) {
        std::vector<std::pair<std::string, std::string>> env = {
            {"VIADUCT_COORDINATOR", "127.0.0.1:" + std::to_string(port)},
            {"VIADUCT_RANK", std::to_string(r)},
            {"VIADUCT_SIZE", std::to_string(ranks)},
            {"VIADUCT_PROVIDER", provider},
            {"VIADUCT_COORDINATOR_HOST", rank0_hosts && r == 0 ? "1" : "0"},
        };
        if (key_file.empty())
            env.push_back({"VIADUCT_JOB_KEY", key});
        else
            env.push_back({"VIADUCT_JOB_KEY_FILE", key_file});
        procs.push_back(spawn({worker, "wildcard"}, env, dir + "-" + std::to_string(r) + ".log"));
    }
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(120 * launcher::slowdown());
    for (int r = 0; r < ranks; ++r) {
        int status = finish(procs[static_cast<size_t>(r)], deadline);
        std::string out = slurp(procs[static_cast<size_t>(r)].log);
        INFO("rank " << r << " exited " << status << ":\n" << out);
        CHECK(status == 0);
        CHECK(out.find("PASS wildcard") != std::string::npos);
        std::remove(procs[static_cast<size_t>(r)].log.c_str());
    }
    for (const Proc &p : extra) {
        int status = finish(p, deadline);
        INFO("coordinator:\n" << slurp(p.log));
        CHECK(status == 0);
        std::remove(p.log.c_str());
    }
}

}  // namespace

TEST_CASE("ranks started by hand join through a coordinator hosted by rank 0", "[rendezvous]") {
    const std::string provider = GENERATE(as<std::string>{}, "shm", "tcp;ofi_rxm");
    INFO("provider=" << provider);
    run_ranks(3, free_port(), true, provider, make_key());
}

TEST_CASE("ranks started by hand join through `msgrun --serve`", "[rendezvous]") {
    const std::string provider = GENERATE(as<std::string>{}, "shm", "tcp;ofi_rxm");
    INFO("provider=" << provider);
    const int port = free_port();
    const std::string msgrun = std::getenv("VIADUCT_MSGRUN");
    const std::string key = make_key();
    Proc coordinator = spawn(
        {msgrun, "-n", "3", "--serve", "127.0.0.1:" + std::to_string(port), "--timeout", "300"},
        {{"VIADUCT_JOB_KEY", key}}, "/tmp/viaduct-serve-" + std::to_string(getpid()) + ".log");
    run_ranks(3, port, false, provider, key, "", {coordinator});
}

TEST_CASE("`msgrun --serve --key-file` hands its key to ranks started by hand", "[rendezvous]") {
    const int port = free_port();
    const std::string msgrun = std::getenv("VIADUCT_MSGRUN");
    const std::string key_file = "/tmp/viaduct-key-" + std::to_string(getpid());
    std::remove(key_file.c_str());
    Proc coordinator = spawn({msgrun, "-n", "3", "--serve", "127.0.0.1:" + std::to_string(port),
                              "--key-file", key_file, "--timeout", "300"},
                             {}, "/tmp/viaduct-serve-" + std::to_string(getpid()) + ".log");
    // The key file appears whole (msgrun links it into place) once msgrun listens.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    struct stat st {};
    while (::stat(key_file.c_str(), &st) != 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(::stat(key_file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    run_ranks(3, port, false, "shm", "", key_file, {coordinator});
    // A second coordinator refuses to overwrite the key file.
    Proc second = spawn({msgrun, "-n", "2", "--serve", "127.0.0.1:0", "--key-file", key_file}, {},
                        "/tmp/viaduct-serve2-" + std::to_string(getpid()) + ".log");
    int status = finish(second, std::chrono::steady_clock::now() + std::chrono::seconds(60));
    std::string out = slurp(second.log);
    CHECK(status == 2);
    CHECK(out.find("exists") != std::string::npos);
    std::remove(second.log.c_str());
    std::remove(key_file.c_str());
}
