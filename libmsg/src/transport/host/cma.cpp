// Cross-memory reads and writes: the peer's pid and probe word travel in the
// fabric address; each copy loops until the kernel has moved every byte.
#include "transport/host/cma.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>

#include "common/log.hpp"

namespace msg {

namespace {

void put64(std::vector<uint8_t> *out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t get64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

CrossMemory::CrossMemory() {
    std::random_device rd;
    probe_ = (static_cast<uint64_t>(rd()) << 32) | rd() | 1;
}

std::vector<uint8_t> CrossMemory::blob() const {
    std::vector<uint8_t> out;
    put64(&out, static_cast<uint64_t>(getpid()));
    put64(&out, reinterpret_cast<uint64_t>(&probe_));
    put64(&out, probe_);
    return out;
}

void CrossMemory::connect(const std::vector<std::vector<uint8_t>> &blobs, int self) {
    peers_.assign(blobs.size(), Peer{});
    for (size_t r = 0; r < blobs.size(); ++r) {
        if (static_cast<int>(r) == self || blobs[r].size() != kBlobSize) continue;
        // Only a process id the kernel could have given: 0 or a negative id
        // would name this process's group or every process.
        const uint64_t pid = get64(blobs[r].data());
        if (pid == 0 || pid > static_cast<uint64_t>(INT32_MAX)) {
            log_debug(
                "rank %zu: no process id in its cross-memory blob; the provider moves its data", r);
            continue;
        }
        Peer &p = peers_[r];
        p.pid = static_cast<pid_t>(pid);
        uint64_t want = get64(blobs[r].data() + 16);
        uint64_t got = 0;
        if (read_words(r, &got, get64(blobs[r].data() + 8)) == 0 && got == want) {
            p.ok = true;
        } else {
            log_debug("rank %zu: cross-memory reads unavailable; the provider moves its data", r);
        }
    }
}

int CrossMemory::read_words(size_t r, uint64_t *out, uint64_t remote) const {
    iovec l{out, sizeof *out};
    iovec rv{reinterpret_cast<void *>(remote), sizeof *out};
    ssize_t n = process_vm_readv(peers_[r].pid, &l, 1, &rv, 1, 0);
    return n == static_cast<ssize_t>(sizeof *out) ? 0 : (n < 0 ? errno : EIO);
}

int CrossMemory::read(int peer, void *local, size_t len, uint64_t remote) const {
    return copy(peer, local, len, remote, false);
}

int CrossMemory::write(int peer, const void *local, size_t len, uint64_t remote) const {
    return copy(peer, const_cast<void *>(local), len, remote, true);
}

int CrossMemory::copy(int peer, void *local, size_t len, uint64_t remote, bool to_peer) const {
    auto *mine = static_cast<char *>(local);
    pid_t pid = peers_[static_cast<size_t>(peer)].pid;
    size_t done = 0;
    while (done < len) {
        iovec l{mine + done, len - done};
        iovec rv{reinterpret_cast<void *>(remote + done), len - done};
        ssize_t n = to_peer ? process_vm_writev(pid, &l, 1, &rv, 1, 0)
                            : process_vm_readv(pid, &l, 1, &rv, 1, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return EIO;
        done += static_cast<size_t>(n);
    }
    return 0;
}

}  // namespace msg
