// allreduce: recursive doubling for small vectors (with the fold that makes a
// power of two out of any P), the ring (reduce-scatter, then allgather) for
// large ones. Both give every rank the same bits: each pairwise combination
// is computed alike on both sides (the reductions are commutative), and the
// ring computes each segment once and copies it.
#include <cstring>
#include <vector>

#include "collective/algorithms.hpp"

namespace msg {

namespace {

// Ranks 0 .. 2*rem-1 pair up (even into odd) so 2^k ranks remain; ranks past
// them keep going, renumbered. The real rank of doubling member n:
int real_rank(int n, int rem) {
    return n < rem ? 2 * n + 1 : n + rem;
}

void build_recursive_doubling(Schedule &s, char *acc, size_t count, const Reduction &red) {
    const size_t bytes = count * red.element_size();
    const int p = s.size, r = s.rank;
    int p2 = 1;
    while (p2 * 2 <= p) p2 *= 2;
    const int rem = p - p2;
    char *tmp = s.scratch(bytes);
    auto combine = [=] { red.apply(tmp, acc, count); };
    int n = r - rem;  // this rank in the doubling, or -1 when folded away
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            s.send(s.round(), r + 1, acc, bytes);
            s.recv(s.round(), r + 1, acc, bytes);
            return;
        }
        Round &fold = s.round();
        s.recv(fold, r - 1, tmp, bytes);
        fold.then = combine;
        n = r / 2;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        const int peer = real_rank(n ^ mask, rem);
        Round &x = s.round();
        s.send(x, peer, acc, bytes);
        s.recv(x, peer, tmp, bytes);
        x.then = combine;
    }
    if (r < 2 * rem) s.send(s.round(), r - 1, acc, bytes);
}

void build_ring(Schedule &s, char *acc, size_t count, const Reduction &red) {
    const size_t es = red.element_size();
    const int p = s.size, r = s.rank;
    const size_t up = static_cast<size_t>(p);
    std::vector<size_t> off(up), len(up);
    size_t biggest = 0;
    for (size_t i = 0; i < up; ++i) {
        const size_t first = i * (count / up) + std::min(i, count % up);
        off[i] = first * es;
        len[i] = (count / up + (i < count % up ? 1 : 0)) * es;
        biggest = std::max(biggest, len[i]);
    }
    char *tmp = s.scratch(biggest);
    const int right = (r + 1) % p, left = (r + p - 1) % p;
    auto seg = [p](int i) { return static_cast<size_t>(((i % p) + p) % p); };
    // Reduce-scatter: after P-1 steps this rank holds segment r+1 whole.
    for (int step = 0; step < p - 1; ++step) {
        const size_t out = seg(r - step), in = seg(r - step - 1);
        Round &x = s.round();
        s.send(x, right, acc + off[out], len[out]);
        s.recv(x, left, tmp, len[in]);
        char *dst = acc + off[in];
        const size_t n = len[in] / es;
        x.then = [=] { red.apply(tmp, dst, n); };
    }
    // Allgather of the whole segments: rank r starts holding segment r+1.
    std::vector<size_t> goff(up), glen(up);
    for (int i = 0; i < p; ++i) {
        goff[static_cast<size_t>(i)] = off[seg(i + 1)];
        glen[static_cast<size_t>(i)] = len[seg(i + 1)];
    }
    add_ring_allgather(s, acc, goff.data(), glen.data());
}

}  // namespace

void build_allreduce(Schedule &s, const char *send, char *recv, size_t count,
                     const Reduction &red) {
    const size_t bytes = count * red.element_size();
    s.round().then = [=] {
        if (recv != send) std::memmove(recv, send, bytes);
    };
    if (s.size == 1 || count == 0) return;
    if (bytes >= kAllreduceRingMin && count >= static_cast<size_t>(s.size))
        build_ring(s, recv, count, red);
    else
        build_recursive_doubling(s, recv, count, red);
}

}  // namespace msg
