// Binomial trees rooted anywhere (ranks renumbered so the root is 0): bcast
// (and, for large messages, van de Geijn's scatter + ring allgather), reduce,
// gather and scatter. Rank v's children are v + m for each power of two m
// below v's lowest set bit (every m < P for the root); its parent is v less
// that bit.
#include <cstring>
#include <vector>

#include "collective/algorithms.hpp"

namespace msg {

namespace {

struct Tree {
    int size, root, v;  // v: this rank's number with the root as 0
    int real(int vrank) const { return (vrank + root) % size; }
    int low_bit() const { return v == 0 ? size_ceiling() : (v & -v); }
    int parent() const { return v - (v & -v); }
    int size_ceiling() const {
        int m = 1;
        while (m < size) m <<= 1;
        return m;
    }
    // Children's masks, largest first (the biggest subtree starts soonest).
    std::vector<int> child_masks() const {
        std::vector<int> out;
        for (int m = low_bit() >> 1; m >= 1; m >>= 1)
            if (v + m < size) out.push_back(m);
        return out;
    }
    // Ranks in v's subtree (v itself included).
    int subtree(int vrank) const {
        if (vrank == 0) return size;
        return std::min(vrank & -vrank, size - vrank);
    }
};

Tree tree_of(const Schedule &s, int root) {
    return Tree{s.size, root, (s.rank - root + s.size) % s.size};
}

void build_bcast_binomial(Schedule &s, char *buf, size_t bytes, int root) {
    const Tree t = tree_of(s, root);
    if (t.v != 0) s.recv(s.round(), t.real(t.parent()), buf, bytes);
    const std::vector<int> masks = t.child_masks();
    if (masks.empty()) return;
    Round &r = s.round();
    for (int m : masks) s.send(r, t.real(t.v + m), buf, bytes);
}

// van de Geijn: the root deals out P pieces along the tree (a scatter), then
// a ring allgather puts every piece everywhere: about 2x the data moved per
// rank instead of log2(P) x.
void build_bcast_scatter_allgather(Schedule &s, char *buf, size_t bytes, int root) {
    const int p = s.size;
    const Tree t = tree_of(s, root);
    // Piece i (vrank order) of the buffer: offsets by vrank, in real order for the ring.
    std::vector<size_t> off(static_cast<size_t>(p) + 1);
    for (int i = 0; i <= p; ++i)
        off[static_cast<size_t>(i)] = bytes * static_cast<size_t>(i) / static_cast<size_t>(p);
    auto span = [&](int first, int n) {
        return off[static_cast<size_t>(first + n)] - off[static_cast<size_t>(first)];
    };
    if (t.v != 0)
        s.recv(s.round(), t.real(t.parent()), buf + off[static_cast<size_t>(t.v)],
               span(t.v, t.subtree(t.v)));
    const std::vector<int> masks = t.child_masks();
    if (!masks.empty()) {
        Round &r = s.round();
        for (int m : masks)
            s.send(r, t.real(t.v + m), buf + off[static_cast<size_t>(t.v + m)],
                   span(t.v + m, t.subtree(t.v + m)));
    }
    std::vector<size_t> ring_off(static_cast<size_t>(p)), ring_len(static_cast<size_t>(p));
    for (int rank = 0; rank < p; ++rank) {
        const int vr = (rank - root + p) % p;
        ring_off[static_cast<size_t>(rank)] = off[static_cast<size_t>(vr)];
        ring_len[static_cast<size_t>(rank)] = span(vr, 1);
    }
    add_ring_allgather(s, buf, ring_off.data(), ring_len.data());
}

}  // namespace

void build_bcast(Schedule &s, char *buf, size_t bytes, int root) {
    if (s.size == 1 || bytes == 0) return;
    if (bytes >= kBcastScatterMin && s.size > 3 && bytes >= static_cast<size_t>(s.size))
        build_bcast_scatter_allgather(s, buf, bytes, root);
    else
        build_bcast_binomial(s, buf, bytes, root);
}

void build_reduce(Schedule &s, const char *send, char *recv, size_t count, const Reduction &red,
                  int root) {
    const size_t bytes = count * red.element_size();
    const Tree t = tree_of(s, root);
    char *acc = t.v == 0 ? recv : s.scratch(bytes);
    s.round().then = [=] {
        if (acc != send) std::memmove(acc, send, bytes);
    };
    if (s.size == 1 || bytes == 0) return;
    // Every child's part arrives at once; they are combined in a fixed order.
    const std::vector<int> masks = t.child_masks();
    if (!masks.empty()) {
        Round &r = s.round();
        std::vector<char *> parts;
        for (int m : masks) {
            parts.push_back(s.scratch(bytes));
            s.recv(r, t.real(t.v + m), parts.back(), bytes);
        }
        r.then = [=] {
            for (char *part : parts) red.apply(part, acc, count);
        };
    }
    if (t.v != 0) s.send(s.round(), t.real(t.parent()), acc, bytes);
}

void build_gather(Schedule &s, const char *send, size_t bytes, char *recv, int root) {
    const Tree t = tree_of(s, root);
    const size_t mine = static_cast<size_t>(t.subtree(t.v));
    // This rank's subtree's blocks, in vrank order from v.
    char *tmp = s.scratch(mine * bytes);
    s.round().then = [=] { std::memcpy(tmp, send, bytes); };
    const std::vector<int> masks = t.child_masks();
    if (!masks.empty()) {
        Round &r = s.round();
        for (int m : masks)
            s.recv(r, t.real(t.v + m), tmp + static_cast<size_t>(m) * bytes,
                   static_cast<size_t>(t.subtree(t.v + m)) * bytes);
    }
    if (t.v != 0) {
        s.send(s.round(), t.real(t.parent()), tmp, mine * bytes);
        return;
    }
    s.round().then = [=] {
        for (int i = 0; i < t.size; ++i)
            std::memcpy(recv + static_cast<size_t>(t.real(i)) * bytes,
                        tmp + static_cast<size_t>(i) * bytes, bytes);
    };
}

void build_scatter(Schedule &s, const char *send, size_t bytes, char *recv, int root) {
    const Tree t = tree_of(s, root);
    const size_t mine = static_cast<size_t>(t.subtree(t.v));
    char *tmp = s.scratch(mine * bytes);
    if (t.v == 0) {
        s.round().then = [=] {
            for (int i = 0; i < t.size; ++i)
                std::memcpy(tmp + static_cast<size_t>(i) * bytes,
                            send + static_cast<size_t>(t.real(i)) * bytes, bytes);
        };
    } else {
        s.recv(s.round(), t.real(t.parent()), tmp, mine * bytes);
    }
    const std::vector<int> masks = t.child_masks();
    Round &r = s.round();
    for (int m : masks)
        s.send(r, t.real(t.v + m), tmp + static_cast<size_t>(m) * bytes,
               static_cast<size_t>(t.subtree(t.v + m)) * bytes);
    r.then = [=] { std::memcpy(recv, tmp, bytes); };
}

}  // namespace msg
