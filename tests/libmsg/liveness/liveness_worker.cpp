// A rank for the liveness tests, started by hand against `msgrun --serve`: it joins, writes
// DIR/ready-RANK, then waits where its role says and prints what each wait returned.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "msg/msg.h"

namespace {

constexpr int kTag = 7;

double now_epoch() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// One line per finished wait: the driver compares the time with the moment it stopped a
// process, and the status with the one the case expects.
void report(const char *what, int rc) {
    std::printf("RESULT %s %d %.6f (%s)\n", what, rc, now_epoch(), msg_strerror(rc));
    std::fflush(stdout);
}

void write_ready(const std::string &dir, int rank) {
    const std::string path = dir + "/ready-" + std::to_string(rank);
    const std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
        std::perror(path.c_str());
        std::exit(2);
    }
}

[[noreturn]] void idle_for_ever() {
    for (;;) ::pause();
}

}  // namespace

// Usage: liveness_worker DIR ROLE, ROLE one of
//   recv_first     block in a receive from the last rank, then in msg_barrier
//   barrier_first  post a receive from the last rank, block in msg_barrier, then wait for it
//   barrier        block in msg_barrier (the last rank is meant never to reach it)
//   finalize       call msg_finalize at once
//   recv_rank0     block in a receive from rank 0, which never sends
//   idle           join, then do nothing (the process to be stopped)
int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s DIR ROLE\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1], role = argv[2];
    msg_context_t *ctx = nullptr;
    int rc = msg_init(nullptr, &ctx);
    if (rc != MSG_OK) {
        std::fprintf(stderr, "msg_init: %s\n", msg_strerror(rc));
        return 2;
    }
    int rank = 0, size = 0;
    msg_rank(ctx, &rank);
    msg_size(ctx, &size);
    const int last = size - 1;
    char byte = 0;

    if (role == "idle") {
        write_ready(dir, rank);
        idle_for_ever();
    }
    if (role == "recv_first") {
        write_ready(dir, rank);
        report("recv", msg_recv(ctx, last, kTag, &byte, 1, nullptr));
        report("barrier", msg_barrier(ctx));
    } else if (role == "barrier_first") {
        msg_cq_t *cq = nullptr;
        rc = msg_cq_create(ctx, &cq);
        if (rc == MSG_OK) rc = msg_irecv(ctx, last, kTag, &byte, 1, cq, nullptr);
        if (rc != MSG_OK) {
            std::fprintf(stderr, "posting the receive: %s\n", msg_strerror(rc));
            return 2;
        }
        write_ready(dir, rank);
        report("barrier", msg_barrier(ctx));
        msg_completion_t c{};
        rc = msg_cq_wait(cq, -1, &c);
        report("recv", rc == MSG_OK ? c.status : rc);
        msg_cq_destroy(cq);
    } else if (role == "barrier") {
        write_ready(dir, rank);
        report("barrier", msg_barrier(ctx));
    } else if (role == "recv_rank0") {
        write_ready(dir, rank);
        report("recv", msg_recv(ctx, 0, kTag, &byte, 1, nullptr));
    } else if (role != "finalize") {
        std::fprintf(stderr, "unknown role %s\n", role.c_str());
        return 2;
    } else {
        write_ready(dir, rank);
    }
    report("finalize", msg_finalize(ctx));
    msg_destroy(ctx);
    return 0;
}
