// Destination patterns of the standard network experiments (Dally and Towles, "Principles and
// Practices of Interconnection Networks", ch. 3): which node each packet a source injects is
// for. Self-traffic (a node to itself, through its router) only when asked for.
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace sansim {

class DestinationPattern {
public:
    // name: uniform | permutation | transpose | hotspot | alltoall. Throws
    // std::invalid_argument for an unknown name or a node count the pattern cannot use.
    DestinationPattern(const std::string &name, int nodes, bool self, double hot_fraction,
                       std::mt19937_64 &rng);

    // Whether source s injects at all (transpose's diagonal does not, without self-traffic).
    bool sends(int s) const;
    // The destination of s's next packet.
    int next(int s, std::mt19937_64 &rng);
    // Every (source, destination) pair next() may produce.
    void each_pair(const std::function<void(int, int)> &visit) const;

private:
    enum class Kind { uniform, permutation, transpose, hotspot, alltoall };
    int uniform(int s, std::mt19937_64 &rng) const;

    Kind kind_ = Kind::uniform;
    int n_ = 0;
    bool self_ = false;
    double hot_fraction_ = 0;
    std::vector<int> fixed_;  // permutation and transpose: each source's one destination
    std::vector<int> turn_;   // alltoall: each source's next offset
};

}  // namespace sansim
