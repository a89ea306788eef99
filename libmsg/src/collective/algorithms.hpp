// The schedules of each collective, and which algorithm each uses by message
// size and number of ranks (as Open MPI's coll/tuned decides, in simpler
// form). Each build_* fills a Schedule for this rank; buffers are the
// caller's (checked by the API), scratch memory the schedule's own.
#pragma once

#include <cstddef>

#include "collective/reduction.hpp"
#include "collective/schedule.hpp"

namespace msg {

// From this many bytes allreduce splits the vector (reduce-scatter, then
// allgather: 2(P-1)/P of the data each way per rank) instead of recursive
// doubling (log2 P full exchanges). At P >= kRabenseifnerMinRanks and below
// kAllreduceRingMin it does so by Rabenseifner's recursive halving and
// doubling (2 log2 P rounds), else round the ring (2(P-1) rounds, each to a
// neighbour). Each round waits for its slowest peer: at P = 8 on two cores
// 2 MiB took 11.4-13.3 ms in 2 log2 P rounds against 13.9-15.8 in 14.
constexpr size_t kAllreduceLargeMin = 64 * 1024;
constexpr size_t kAllreduceRingMin = 4 * 1024 * 1024;
constexpr int kRabenseifnerMinRanks = 8;
// Above this many bytes in all a power-of-two allgather goes round the ring
// rather than by recursive doubling.
constexpr size_t kAllgatherRingMin = 256 * 1024;
// bcast: binomial tree below this many bytes (or P <= 3); scatter plus ring
// allgather (van de Geijn) above it.
constexpr size_t kBcastScatterMin = 512 * 1024;
// alltoall(v): every message posted at once while the whole exchange is at
// most this many bytes; pairwise exchange (P-1 rounds) above. Each round
// waits for its slowest peer, and on a host with more ranks than cores a
// peer is often not running: at P = 8 on two cores, 32 KiB a peer took
// 200 us at once against 590 us in rounds (Open MPI: 166 us, its linear
// algorithm at this size).
constexpr size_t kAlltoallPairwiseMin = 1024 * 1024;

// binomial.cpp
void build_bcast(Schedule &s, char *buf, size_t bytes, int root);
void build_reduce(Schedule &s, const char *send, char *recv, size_t count, const Reduction &red,
                  int root);
void build_gather(Schedule &s, const char *send, size_t bytes, char *recv, int root);
void build_scatter(Schedule &s, const char *send, size_t bytes, char *recv, int root);
// allreduce.cpp
void build_allreduce(Schedule &s, const char *send, char *recv, size_t count, const Reduction &red);
// allgather.cpp
void build_allgather(Schedule &s, const char *send, size_t bytes, char *recv);
// The ring over blocks of any sizes (allgather's, and van de Geijn's bcast):
// block i is at buf + offset[i], len[i] bytes; rank r starts holding block r.
void add_ring_allgather(Schedule &s, char *buf, const size_t *offset, const size_t *len);
// alltoall.cpp
void build_alltoallv(Schedule &s, const char *send, const size_t *sendcounts, const size_t *sdispls,
                     char *recv, const size_t *recvcounts, const size_t *rdispls);
void build_alltoall(Schedule &s, const char *send, size_t bytes, char *recv);

}  // namespace msg
