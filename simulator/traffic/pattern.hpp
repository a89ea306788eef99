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
    // name: uniform | permutation | transpose | hotspot | alltoall | next_group | remote.
    // Throws std::invalid_argument for an unknown name or a node count the pattern cannot use.
    // groups: each node's group (its router's, on a dragonfly), for next_group; routers: the
    // router each node is wired to, for remote.
    DestinationPattern(const std::string &name, int nodes, bool self, double hot_fraction,
                       std::mt19937_64 &rng, const std::vector<int> &groups = {},
                       const std::vector<int> &routers = {});

    // Whether source s injects at all (transpose's diagonal does not, without self-traffic).
    bool sends(int s) const;
    // The destination of s's next packet.
    int next(int s, std::mt19937_64 &rng);
    // Every (source, destination) pair next() may produce.
    void each_pair(const std::function<void(int, int)> &visit) const;

  private:
    enum class Kind { uniform, permutation, transpose, hotspot, alltoall, next_group, remote };
    int uniform(int s, std::mt19937_64 &rng) const;
    void group_members(const std::vector<int> &groups);
    void remote_nodes(const std::vector<int> &routers);

    Kind kind_ = Kind::uniform;
    int n_ = 0;
    bool self_ = false;
    double hot_fraction_ = 0;
    std::vector<int> fixed_;  // permutation and transpose: each source's one destination
    std::vector<int> turn_;   // alltoall: each source's next offset
    // next_group: the nodes of each group in turn, and each source's targets in them;
    // remote: every other router's nodes, one list per router.
    std::vector<std::vector<int>> members_;
    std::vector<int> target_group_;
};

}  // namespace sansim
