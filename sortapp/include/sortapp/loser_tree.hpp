// A loser (tournament) tree over k sources: the winner is at the top, and replacing it costs
// one comparison per level (log2 k), against the losers stored on its path.
#pragma once

#include <cstddef>
#include <vector>

namespace sortapp {

// Less(a, b) orders live sources a and b; Exhausted(s) is true once a source has nothing left
// (exhausted sources lose against everything).
template <class Less, class Exhausted>
class LoserTree {
  public:
    LoserTree(std::size_t k, Less less, Exhausted exhausted)
        : k_(k), less_(less), exhausted_(exhausted), tree_(2 * k + 1, 0) {
        if (k_ > 0) winner_ = build(1);
    }

    // The source holding the smallest item, or k when every source is exhausted.
    std::size_t winner() const { return (k_ == 0 || exhausted_(winner_)) ? k_ : winner_; }

    // Call after the winner has advanced to its next item.
    void replay() {
        std::size_t s = winner_;
        for (std::size_t node = (s + k_) / 2; node >= 1; node /= 2) {
            if (beats(tree_[node], s)) std::swap(tree_[node], s);
        }
        winner_ = s;
    }

  private:
    // Leaves are k..2k-1 (leaf of source s is s + k); internal nodes 1..k-1 hold losers.
    std::size_t build(std::size_t node) {
        if (node >= k_) return node - k_;
        std::size_t a = build(2 * node), b = build(2 * node + 1);
        if (beats(b, a)) std::swap(a, b);
        tree_[node] = b;
        return a;
    }
    bool beats(std::size_t a, std::size_t b) const {
        if (exhausted_(a)) return false;
        if (exhausted_(b)) return true;
        if (less_(a, b)) return true;
        if (less_(b, a)) return false;
        return a < b;  // equal keys leave in source order
    }

    std::size_t k_;
    Less less_;
    Exhausted exhausted_;
    std::vector<std::size_t> tree_;  // losers at 1..k-1 (sized for any node index)
    std::size_t winner_ = 0;
};

}  // namespace sortapp
