// alltoall and alltoallv: for a small exchange every message at once; for a
// large one pairwise exchange, step k sending to rank r+k and receiving from
// r-k, so each rank has one message each way in flight.
#include <cstring>
#include <vector>

#include "collective/algorithms.hpp"

namespace msg {

void build_alltoallv(Schedule &s, const char *send, const size_t *sendcounts, const size_t *sdispls,
                     char *recv, const size_t *recvcounts, const size_t *rdispls) {
    const int p = s.size, r = s.rank;
    const auto me = static_cast<size_t>(r);
    char *own_dst = recv + rdispls[me];
    const char *own_src = send + sdispls[me];
    const size_t own = std::min(sendcounts[me], recvcounts[me]);
    s.round().then = [=] {
        if (own > 0 && own_dst != own_src) std::memmove(own_dst, own_src, own);
    };
    size_t total = 0;
    for (int i = 0; i < p; ++i) total += sendcounts[static_cast<size_t>(i)];
    const bool at_once = total <= kAlltoallPairwiseMin;
    Round *x = nullptr;
    for (int step = 1; step < p; ++step) {
        const auto dst = static_cast<size_t>((r + step) % p);
        const auto src = static_cast<size_t>((r - step + p) % p);
        if (x == nullptr || !at_once) x = &s.round();
        s.send(*x, static_cast<int>(dst), send + sdispls[dst], sendcounts[dst]);
        s.recv(*x, static_cast<int>(src), recv + rdispls[src], recvcounts[src]);
    }
}

void build_alltoall(Schedule &s, const char *send, size_t bytes, char *recv) {
    const auto p = static_cast<size_t>(s.size);
    std::vector<size_t> counts(p, bytes), displs(p);
    for (size_t i = 0; i < p; ++i) displs[i] = i * bytes;
    build_alltoallv(s, send, counts.data(), displs.data(), recv, counts.data(), displs.data());
}

}  // namespace msg
