// A rank for the shared-memory tests (shm_test.py): after msg_init it checks that no name of
// its own is left in /dev/shm, optionally fills /dev/shm to the last page, and then exchanges
// messages of every size class with every other rank and checks their bytes.
#include <dirent.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "msg/msg.h"

namespace {

constexpr int kTag = 11;
// Inline, inject-sized, and long (many segments through the receiver's region).
constexpr size_t kSizes[] = {48, 3000, 1 << 20};
constexpr int kRounds = 4;

int fail(int rank, const char *what, int rc) {
    std::fprintf(stderr, "shm_worker[%d]: %s: %s\n", rank, what, msg_strerror(rc));
    return 1;
}

// Names in /dev/shm that this process made: the shm provider's region (viaduct-PID-...) and
// the doorbell's flag (viaduct-db-..., ending in the pid as 8 hex digits).
std::vector<std::string> own_names() {
    const std::string region = "viaduct-" + std::to_string(getpid()) + "-";
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(getpid()));
    std::vector<std::string> found;
    DIR *d = opendir("/dev/shm");
    if (d == nullptr) return found;
    while (dirent *e = readdir(d)) {
        const std::string n = e->d_name;
        const bool bell =
            n.rfind("viaduct-db-", 0) == 0 && n.size() > 8 && n.compare(n.size() - 8, 8, hex) == 0;
        if (n.rfind(region, 0) == 0 || bell) found.push_back(n);
    }
    closedir(d);
    return found;
}

// Takes every free page of /dev/shm into one file (unlinked at once: its pages stay taken
// while the descriptor is open). Returns the descriptor, or -1.
int fill_dev_shm(int rank) {
    const std::string path = "/dev/shm/shm-worker-fill-" + std::to_string(getpid());
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return std::perror(path.c_str()), -1;
    ::unlink(path.c_str());
    struct statvfs v {};
    statvfs("/dev/shm", &v);
    off_t end = 0;
    // Big steps while they fit, then a page at a time up to the last one.
    for (off_t step = static_cast<off_t>(v.f_bavail * v.f_frsize); step >= 4096;) {
        if (posix_fallocate(fd, end, step) == 0)
            end += step;
        else
            step /= 2;
    }
    statvfs("/dev/shm", &v);
    std::fprintf(stderr, "shm_worker[%d]: /dev/shm filled (%llu bytes taken, %llu free)\n", rank,
                 static_cast<unsigned long long>(end),
                 static_cast<unsigned long long>(v.f_bavail * v.f_frsize));
    return fd;
}

unsigned char pattern(int from, int to, int tag, size_t i) {
    return static_cast<unsigned char>(from * 31 + to * 7 + tag * 3 + i);
}

// Every rank sends every other rank kRounds messages of each size, each with a tag of its own,
// and receives theirs.
int exchange(msg_context_t *ctx, int rank, int size) {
    msg_cq_t *cq = nullptr;
    if (int rc = msg_cq_create(ctx, &cq); rc != MSG_OK) return fail(rank, "msg_cq_create", rc);
    std::vector<std::vector<unsigned char>> in, out;
    int posted = 0;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        for (int tag = kTag; tag < kTag + kRounds * 3; ++tag) {
            const size_t len = kSizes[(tag - kTag) % 3];
            in.emplace_back(len);
            out.emplace_back(len);
            for (size_t i = 0; i < len; ++i) out.back()[i] = pattern(rank, peer, tag, i);
            // The cookie is the receive's index (the vectors' buffers stay where they are).
            void *index = reinterpret_cast<void *>(in.size() - 1);
            int rc = msg_irecv(ctx, peer, tag, in.back().data(), len, cq, index);
            if (rc == MSG_OK) rc = msg_isend(ctx, peer, tag, out.back().data(), len, cq, nullptr);
            if (rc != MSG_OK) return fail(rank, "post", rc);
            posted += 2;
        }
    }
    int result = 0;
    for (int done = 0; done < posted; ++done) {
        msg_completion_t c{};
        int rc = msg_cq_wait(cq, -1, &c);
        if (rc != MSG_OK || c.status != MSG_OK) return fail(rank, "completion", rc ? rc : c.status);
        if (c.op != MSG_OP_RECV) continue;
        const std::vector<unsigned char> &got = in[reinterpret_cast<size_t>(c.cookie)];
        for (size_t i = 0; i < got.size(); ++i)
            if (got[i] != pattern(c.source, rank, c.tag, i)) {
                std::fprintf(stderr, "shm_worker[%d]: byte %zu of a %zu-byte message from %d\n",
                             rank, i, got.size(), c.source);
                result = 1;
                break;
            }
    }
    msg_cq_destroy(cq);
    return result;
}

// hold: libmsg's debug line that describes the open transport comes once its shared memory
// exists and before any address is exchanged. Rank 0 writes its pid to $VIADUCT_SHM_HOLD
// there and waits in msg_init until a signal ends it.
void hold_in_init(void *, int, const char *message) {
    if (std::strncmp(message, "transport shm:", 14) != 0) return;
    const char *path = std::getenv("VIADUCT_SHM_HOLD");
    const std::string tmp = std::string(path) + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr || std::fprintf(f, "%d", static_cast<int>(getpid())) < 0 ||
        std::fclose(f) != 0 || std::rename(tmp.c_str(), path) != 0) {
        std::perror(path);
        std::_Exit(2);
    }
    for (;;) ::pause();
}

}  // namespace

// Usage: shm_worker MODE, MODE one of
//   traffic  check that no name of this process is left in /dev/shm, then exchange messages
//   fill     the same, but rank 0 fills /dev/shm to the last page before the exchange
//   hold     rank 0 waits in msg_init once its shared memory exists (see hold_in_init)
int main(int argc, char **argv) {
    const std::string mode = argc == 2 ? argv[1] : "";
    if (mode != "traffic" && mode != "fill" && mode != "hold") {
        std::fprintf(stderr, "usage: %s traffic|fill|hold\n", argv[0]);
        return 2;
    }
    const char *rank_env = std::getenv("VIADUCT_RANK");
    std::fprintf(stderr, "shm_worker[%s]: pid %d\n", rank_env ? rank_env : "?",
                 static_cast<int>(getpid()));
    if (mode == "hold" && rank_env != nullptr && std::strcmp(rank_env, "0") == 0)
        msg_set_log_handler(hold_in_init, nullptr);
    msg_context_t *ctx = nullptr;
    int rc = msg_init(nullptr, &ctx);
    if (rc != MSG_OK) return fail(-1, "msg_init", rc);
    int rank = 0, size = 0;
    msg_rank(ctx, &rank);
    msg_size(ctx, &size);
    int result = 0;
    for (const std::string &n : own_names()) {
        std::fprintf(stderr, "shm_worker[%d]: /dev/shm/%s is still there after msg_init\n", rank,
                     n.c_str());
        result = 1;
    }
    // Every rank has checked before any traffic: messages then move with no name left.
    if ((rc = msg_barrier(ctx)) != MSG_OK) return fail(rank, "msg_barrier", rc);
    int filler = -1;
    if (mode == "fill" && rank == 0 && (filler = fill_dev_shm(rank)) < 0) result = 1;
    if ((rc = msg_barrier(ctx)) != MSG_OK) return fail(rank, "msg_barrier", rc);
    result |= exchange(ctx, rank, size);
    rc = msg_finalize(ctx);
    msg_destroy(ctx);
    if (filler >= 0) ::close(filler);
    if (rc != MSG_OK) return fail(rank, "msg_finalize", rc);
    if (result == 0) std::printf("SHM_OK rank %d\n", rank);
    return result;
}
