// The coordinator admits only ranks that hold the job key, and its limits on
// connections that have not joined (oversized frames before Hello, silence,
// floods, running out of descriptors) never stop the real job.
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/coordinator.hpp"
#include "bootstrap/frame.hpp"
#include "bootstrap/job_key.hpp"
#include "bootstrap/messages.hpp"
#include "coordinator_fixture.hpp"
#include "msg/msg.h"

using namespace msg;
using Clock = std::chrono::steady_clock;
using coordtest::job_key;
using coordtest::patience_ms;
using coordtest::real_rank;

namespace {

int raw_connect(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        if (fd >= 0) ::close(fd);
        return -1;
    }
    return fd;
}

// True once the coordinator has closed fd (end of file or reset), reading and
// discarding whatever it sent first; false if it is still open after wait_ms.
bool closed_by_peer(int fd, int wait_ms) {
    auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() < 0) return false;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[4096];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return true;
    }
}

// Runs a whole job of `size` ranks against the coordinator on `port`: an
// allgather of each rank's number, a barrier, and an orderly leave.
void run_job(int port, int size) {
    std::vector<std::unique_ptr<Bootstrap>> ranks(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) ranks[static_cast<size_t>(r)] = real_rank(port, r, size);
    std::vector<int> status(static_cast<size_t>(size), -1);
    std::vector<std::string> errors(static_cast<size_t>(size));
    std::vector<std::vector<std::vector<uint8_t>>> all(static_cast<size_t>(size));
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
        threads.emplace_back([&, r] {
            auto i = static_cast<size_t>(r);
            status[i] = ranks[i]->allgather({static_cast<uint8_t>(r), 0xAB}, all[i], patience_ms(),
                                            &errors[i]);
            if (status[i] == MSG_OK) status[i] = ranks[i]->barrier(patience_ms(), &errors[i]);
            ranks[i]->leave();
        });
    for (auto &t : threads) t.join();
    for (int r = 0; r < size; ++r) {
        auto i = static_cast<size_t>(r);
        INFO("rank " << r << ": " << errors[i]);
        REQUIRE(status[i] == MSG_OK);
        REQUIRE(all[i].size() == static_cast<size_t>(size));
        for (int q = 0; q < size; ++q)
            CHECK(all[i][static_cast<size_t>(q)] ==
                  std::vector<uint8_t>{static_cast<uint8_t>(q), 0xAB});
    }
}

std::unique_ptr<boot::Coordinator> serve(int size, const boot::CoordinatorLimits &limits = {}) {
    return coordtest::serve(size, limits);
}

int open_descriptors() {
    int n = 0;
    for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

}  // namespace

TEST_CASE("a connection sending an oversized frame before Hello is dropped", "[boot_limits]") {
    auto coord = serve(2);
    int fd = raw_connect(coord->port());
    REQUIRE(fd >= 0);
    // A frame header announcing 1 MiB, then a part of it: without a limit
    // before Hello the coordinator would wait for (and buffer) the rest.
    std::vector<uint8_t> b;
    boot::put_u32(b, 1u << 20);
    b.push_back(static_cast<uint8_t>(boot::FrameType::Hello));
    b.resize(2000, 0x55);
    REQUIRE(::send(fd, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size()));
    CHECK(closed_by_peer(fd, patience_ms()));
    ::close(fd);
    run_job(coord->port(), 2);
    CHECK(coord->join());
}

TEST_CASE("a connection that says nothing is closed", "[boot_limits]") {
    boot::CoordinatorLimits limits;
    limits.hello_timeout_ms = 200;
    auto coord = serve(2, limits);
    int fd = raw_connect(coord->port());
    REQUIRE(fd >= 0);
    CHECK(closed_by_peer(fd, patience_ms()));
    ::close(fd);
    run_job(coord->port(), 2);
    CHECK(coord->join());
}

TEST_CASE("a flood of connections does not stop the real job", "[boot_flood]") {
    // The coordinator runs in a child with few descriptors, so that the
    // flood would exhaust them without the limits.
    const bool bounded = GENERATE(true, false);
    boot::CoordinatorLimits limits;
    // Unbounded: every connection is kept until accept4 fails with EMFILE.
    if (!bounded) limits.max_pending = 1 << 20;
    INFO((bounded ? "bounded pending connections" : "descriptors run out first"));
    int port_pipe[2];
    REQUIRE(::pipe(port_pipe) == 0);
    const int fd_limit = open_descriptors() + 100;
    const boot::JobKey key = job_key();  // made before the fork: both sides hold it
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        rlimit rl{};
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = static_cast<rlim_t>(fd_limit);
        setrlimit(RLIMIT_NOFILE, &rl);
        std::string error;
        auto c = boot::Coordinator::listen("127.0.0.1", "0", 2, patience_ms(), key, &error, limits);
        int port = c ? c->port() : -1;
        if (::write(port_pipe[1], &port, sizeof port) != sizeof port || !c) _exit(3);
        c->start();
        _exit(c->join() ? 0 : 1);
    }
    ::close(port_pipe[1]);
    int port = -1;
    REQUIRE(::read(port_pipe[0], &port, sizeof port) == sizeof port);
    ::close(port_pipe[0]);
    REQUIRE(port > 0);

    constexpr int kFlood = 300;
    std::vector<int> flood;
    for (int k = 0; k < kFlood; ++k) {
        int fd = raw_connect(port);
        REQUIRE(fd >= 0);
        flood.push_back(fd);
    }
    // The ranks connect after the whole flood, so they wait behind it.
    run_job(port, 2);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    if (bounded) {
        // The coordinator accepted the whole flood before the ranks; it kept
        // at most max_pending of it open at the end.
        int open = 0;
        for (int fd : flood) {
            // Past its challenge, a closed connection reads as end of file.
            char buf[256];
            ssize_t n;
            while ((n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++open;
        }
        CHECK(open <= limits.max_pending);
    }
    for (int fd : flood) ::close(fd);
}

namespace {

// One rank of a job of `size` on `port`, holding `key`; returns its status.
int join_as(int port, int rank, int size, const boot::JobKey &key, std::string *error) {
    TcpJob job;
    job.host = "127.0.0.1";
    job.port = std::to_string(port);
    job.rank = rank;
    job.size = size;
    job.key = key;
    std::unique_ptr<Bootstrap> b;
    int rc = connect_tcp_bootstrap(job, patience_ms(), &b, error);
    if (b) b->leave();
    return rc;
}

}  // namespace

TEST_CASE("a rank with a wrong key is refused and takes no slot", "[boot_auth]") {
    auto coord = serve(2);
    std::string error;
    // It claims rank 1 before the real rank 1 joins.
    CHECK(join_as(coord->port(), 1, 2, boot::make_job_key(), &error) == MSG_ERR_BOOTSTRAP);
    CHECK_THAT(error, Catch::Contains("refused rank 1: wrong job key"));
    run_job(coord->port(), 2);
    CHECK(coord->join());
}

TEST_CASE("a Hello without a proof of the key is refused", "[boot_auth]") {
    auto coord = serve(2);
    int fd = raw_connect(coord->port());
    REQUIRE(fd >= 0);
    // The old Hello: rank and size only, sent before reading the challenge.
    std::vector<uint8_t> hello;
    boot::put_u32(hello, 0);
    boot::put_u32(hello, 2);
    REQUIRE(boot::write_frame(fd, boot::FrameType::Hello, hello));
    CHECK(closed_by_peer(fd, patience_ms()));
    ::close(fd);
    run_job(coord->port(), 2);
    CHECK(coord->join());
}

TEST_CASE("a rank does not trust a coordinator that cannot prove the key", "[boot_auth]") {
    int port = 0;
    std::string error;
    int lfd = boot::listen_on("127.0.0.1", "0", &port, &error);
    REQUIRE(lfd >= 0);
    // A fake coordinator: it challenges, reads the Hello, and welcomes with a guess.
    std::thread fake([lfd] {
        int fd = ::accept(lfd, nullptr, nullptr);
        if (fd < 0) return;
        boot::write_frame(fd, boot::FrameType::Challenge,
                          boot::encode_challenge(boot::make_nonce()));
        boot::FrameReader r;
        boot::Frame f;
        while (!r.next(f))
            if (!r.fill(fd)) break;
        boot::Nonce guess = boot::make_nonce();
        boot::write_frame(fd, boot::FrameType::Welcome,
                          std::vector<uint8_t>(guess.begin(), guess.end()));
        char c;
        ::recv(fd, &c, 1, 0);  // until the rank hangs up
        ::close(fd);
    });
    CHECK(join_as(port, 0, 2, job_key(), &error) == MSG_ERR_BOOTSTRAP);
    CHECK_THAT(error, Catch::Contains("did not prove it holds the job key"));
    fake.join();
    ::close(lfd);
}

TEST_CASE("job keys: hex form and key files", "[boot_auth]") {
    boot::JobKey k = boot::make_job_key(), back{};
    const std::string hex = boot::key_to_hex(k);
    CHECK(hex.size() == 64);
    REQUIRE(boot::key_from_hex(" " + hex + "\n", &back));
    CHECK(back == k);
    CHECK_FALSE(boot::key_from_hex(hex.substr(1), &back));
    CHECK_FALSE(boot::key_from_hex(hex + "0", &back));
    CHECK_FALSE(boot::key_from_hex(std::string(63, '0') + "g", &back));
    CHECK_FALSE(boot::key_from_hex("", &back));

    const std::string path =
        (std::filesystem::temp_directory_path() / ("viaduct-key-" + std::to_string(getpid())))
            .string();
    std::string error;
    REQUIRE(boot::write_key_file(path, k, &error));
    CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    CHECK_FALSE(boot::write_key_file(path, boot::make_job_key(), &error));
    CHECK_THAT(error, Catch::Contains("exists"));
    setenv("VIADUCT_JOB_KEY_FILE", path.c_str(), 1);
    unsetenv("VIADUCT_JOB_KEY");
    REQUIRE(boot::load_job_key(&back, &error));
    CHECK(back == k);  // the first key: the second write changed nothing
    unsetenv("VIADUCT_JOB_KEY_FILE");
    std::filesystem::remove(path);
    CHECK_FALSE(boot::load_job_key(&back, &error));
    CHECK_THAT(error, Catch::Contains("job key missing"));
}
