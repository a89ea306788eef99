// allreduce: recursive doubling for small vectors (with the fold that makes a
// power of two out of any P); for large ones a reduce-scatter then an
// allgather, by recursive halving and doubling (Rabenseifner, with the same
// fold) or round the ring. All give every rank the same bits: each pairwise
// combination is computed alike on both sides (the reductions are
// commutative), and the split ones compute each segment once and copy it.
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

struct Fold {
    int p2, rem;
    int n;  // this rank among the 2^k that go on, or -1 (folded away)
};

// The fold that makes a power of two out of any P: the even ranks of the
// first 2*rem send their vector to the odd one above and wait for the result
// (both rounds added here); the odd ones combine it into theirs and go on.
Fold fold_in(Schedule &s, char *acc, char *tmp, size_t count, const Reduction &red) {
    const size_t bytes = count * red.element_size();
    const int p = s.size, r = s.rank;
    int p2 = 1;
    while (p2 * 2 <= p) p2 *= 2;
    const int rem = p - p2;
    if (r >= 2 * rem) return {p2, rem, r - rem};
    if (r % 2 == 0) {
        s.send(s.round(), r + 1, acc, bytes);
        s.recv(s.round(), r + 1, acc, bytes);
        return {p2, rem, -1};
    }
    Round &fold = s.round();
    s.recv(fold, r - 1, tmp, bytes);
    fold.then = [=] { red.apply(tmp, acc, count); };
    return {p2, rem, r / 2};
}

// The odd ranks of the fold hand the result back.
void fold_out(Schedule &s, const char *acc, size_t bytes, const Fold &f) {
    if (s.rank < 2 * f.rem) s.send(s.round(), s.rank - 1, acc, bytes);
}

void build_recursive_doubling(Schedule &s, char *acc, size_t count, const Reduction &red) {
    const size_t bytes = count * red.element_size();
    char *tmp = s.scratch(bytes);
    const Fold f = fold_in(s, acc, tmp, count, red);
    if (f.n < 0) return;
    for (int mask = 1; mask < f.p2; mask <<= 1) {
        const int peer = real_rank(f.n ^ mask, f.rem);
        Round &x = s.round();
        s.send(x, peer, acc, bytes);
        s.recv(x, peer, tmp, bytes);
        x.then = [=] { red.apply(tmp, acc, count); };
    }
    fold_out(s, acc, bytes, f);
}

// Rabenseifner: recursive halving (a reduce-scatter: each step sends half of
// what this rank still holds and combines the half it keeps), then recursive
// doubling of the reduced blocks (an allgather). It moves what the ring moves
// in 2 log2(P) rounds instead of 2(P - 1): fewer waits for peers that are not
// running on a host with more ranks than cores. Needs count >= 2^k.
void build_rabenseifner(Schedule &s, char *acc, size_t count, const Reduction &red) {
    const size_t es = red.element_size();
    char *tmp = s.scratch(count * es);
    const Fold f = fold_in(s, acc, tmp, count, red);
    if (f.n < 0) return;
    const auto up2 = static_cast<size_t>(f.p2);
    std::vector<size_t> off(up2 + 1);  // block i: elements off[i] .. off[i + 1] - 1
    for (size_t i = 0; i <= up2; ++i) off[i] = i * (count / up2) + std::min(i, count % up2);
    // Reduce-scatter: keep the lower half of the blocks held where the step's
    // bit of n is 0, the upper where it is 1; n ends holding block n.
    size_t lo = 0, hi = up2;
    for (int mask = f.p2 / 2; mask >= 1; mask >>= 1) {
        const size_t mid = (lo + hi) / 2;
        const bool upper = (f.n & mask) != 0;
        const size_t keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
        const size_t give_lo = upper ? lo : mid, give_hi = upper ? mid : hi;
        const int peer = real_rank(f.n ^ mask, f.rem);
        Round &x = s.round();
        s.send(x, peer, acc + off[give_lo] * es, (off[give_hi] - off[give_lo]) * es);
        const size_t n = off[keep_hi] - off[keep_lo];
        char *dst = acc + off[keep_lo] * es;
        s.recv(x, peer, tmp, n * es);
        x.then = [=] { red.apply(tmp, dst, n); };
        lo = keep_lo;
        hi = keep_hi;
    }
    // Allgather: the blocks held double each step, the peer's beside them.
    for (int mask = 1; mask < f.p2; mask <<= 1) {
        const auto m = static_cast<size_t>(mask);
        const size_t mine = static_cast<size_t>(f.n) & ~(m - 1);
        const size_t theirs = static_cast<size_t>(f.n ^ mask) & ~(m - 1);
        const int peer = real_rank(f.n ^ mask, f.rem);
        Round &x = s.round();
        s.send(x, peer, acc + off[mine] * es, (off[mine + m] - off[mine]) * es);
        s.recv(x, peer, acc + off[theirs] * es, (off[theirs + m] - off[theirs]) * es);
    }
    fold_out(s, acc, count * es, f);
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
    if (bytes < kAllreduceLargeMin || count < static_cast<size_t>(s.size))
        build_recursive_doubling(s, recv, count, red);
    else if (bytes < kAllreduceRingMin && s.size >= kRabenseifnerMinRanks)
        build_rabenseifner(s, recv, count, red);
    else
        build_ring(s, recv, count, red);
}

}  // namespace msg
