// allgather: recursive doubling for a power-of-two P and a small total,
// otherwise the ring (P-1 steps, each passing one block to the right).
#include <cstring>
#include <vector>

#include "collective/algorithms.hpp"

namespace msg {

void add_ring_allgather(Schedule &s, char *buf, const size_t *offset, const size_t *len) {
    const int p = s.size, r = s.rank;
    const int right = (r + 1) % p, left = (r + p - 1) % p;
    for (int step = 0; step < p - 1; ++step) {
        const auto out = static_cast<size_t>((r - step + p) % p);
        const auto in = static_cast<size_t>((r - step - 1 + 2 * p) % p);
        Round &x = s.round();
        s.send(x, right, buf + offset[out], len[out]);
        s.recv(x, left, buf + offset[in], len[in]);
    }
}

namespace {

// Step k exchanges the 2^k blocks each side has gathered so far.
void build_recursive_doubling(Schedule &s, char *recv, size_t bytes) {
    const int r = s.rank;
    for (int mask = 1; mask < s.size; mask <<= 1) {
        const int peer = r ^ mask;
        const auto mine = static_cast<size_t>(r & ~(mask - 1));
        const auto theirs = static_cast<size_t>(peer & ~(mask - 1));
        const size_t n = static_cast<size_t>(mask) * bytes;
        Round &x = s.round();
        s.send(x, peer, recv + mine * bytes, n);
        s.recv(x, peer, recv + theirs * bytes, n);
    }
}

}  // namespace

void build_allgather(Schedule &s, const char *send, size_t bytes, char *recv) {
    char *own = recv + static_cast<size_t>(s.rank) * bytes;
    s.round().then = [=] {
        if (own != send) std::memmove(own, send, bytes);
    };
    if (s.size == 1 || bytes == 0) return;
    const bool power_of_two = (s.size & (s.size - 1)) == 0;
    if (power_of_two && bytes * static_cast<size_t>(s.size) < kAllgatherRingMin) {
        build_recursive_doubling(s, recv, bytes);
        return;
    }
    const auto p = static_cast<size_t>(s.size);
    std::vector<size_t> off(p), len(p, bytes);
    for (size_t i = 0; i < p; ++i) off[i] = i * bytes;
    add_ring_allgather(s, recv, off.data(), len.data());
}

}  // namespace msg
