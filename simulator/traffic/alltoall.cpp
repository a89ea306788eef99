// The paper's aggregate-bandwidth test (§5.2.2.2): every node sends one long message to every
// other node, `rounds` times over, with no attempt to avoid hot spots. Each node keeps at most
// `window` of its sends posted and posts the next as one completes, as an MPI_Alltoall
// schedule does (MPICH's throttle); window 0 posts them all at once. The order is random per
// node or pairwise (node s's i-th send goes to s + i), and is computed one send at a time: a
// node's state is two counters whatever the fabric's size.
#include <algorithm>

#include "traffic/workload.hpp"

namespace sansim {
namespace {

std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Position i of a random order of 0..m-1 chosen by key: a four-round Feistel network on the
// smallest even number of bits that holds m, walked until it lands below m (a bijection of
// 0..m-1, about two steps on average).
std::uint32_t permuted(std::uint64_t key, std::uint32_t i, std::uint32_t m) {
    if (m <= 1) return 0;
    unsigned half = 1;
    while ((std::uint64_t{1} << (2 * half)) < m) ++half;
    const std::uint32_t mask = (1u << half) - 1;
    std::uint32_t x = i;
    do {
        std::uint32_t l = x >> half, r = x & mask;
        for (std::uint64_t round = 0; round < 4; ++round) {
            const auto f =
                static_cast<std::uint32_t>(mix64(key + round * 0x9E3779B97F4A7C15ULL + r));
            l ^= f & mask;
            std::swap(l, r);
        }
        x = l << half | r;
    } while (x >= m);
    return x;
}

class AllToAll : public Workload {
  public:
    AllToAll(const WorkloadOptions &opt, Network &net)
        : opt_(opt), n_(opt.nodes > 0 ? opt.nodes : net.nodes()) {
        if (n_ < 2) throw std::invalid_argument("alltoall needs at least 2 nodes");
        if (opt.alltoall_order != "random" && opt.alltoall_order != "pairwise")
            throw std::invalid_argument("unknown all-to-all order '" + opt.alltoall_order +
                                        "' (random or pairwise)");
        if (opt.alltoall_window < 0) throw std::invalid_argument("all-to-all window must be >= 0");
        layer_ = std::make_unique<MessageLayer>(net, opt.messages, this);
        per_node_ = static_cast<std::uint64_t>(n_ - 1) * static_cast<std::uint64_t>(opt.rounds);
        remaining_ = static_cast<std::uint64_t>(n_) * per_node_;
        window_ = opt.alltoall_window == 0
                      ? per_node_
                      : std::min<std::uint64_t>(per_node_,
                                                static_cast<std::uint64_t>(opt.alltoall_window));
        posted_.assign(static_cast<std::size_t>(n_), 0);
        random_ = opt.alltoall_order == "random";
    }
    void start(Network &) override {
        for (int s = 0; s < n_; ++s)
            for (std::uint64_t i = 0; i < window_; ++i) post_next(s);
    }
    void message_done(Network &net, std::uint32_t, const Message &m) override {
        if (--remaining_ == 0) net.stop();
        post_next(m.src);
    }
    bool finished() const override { return remaining_ == 0; }
    double total_bytes() const override {
        return static_cast<double>(n_) * (n_ - 1) * opt_.rounds *
               static_cast<double>(opt_.message_bytes);
    }
    void each_pair(const std::function<void(int, int)> &visit) const override {
        all_pairs(n_, visit);
    }

  private:
    // Node s's i-th send of a round goes to the node `offset + 1` after it.
    int destination(int s, std::uint32_t i) const {
        const auto others = static_cast<std::uint32_t>(n_ - 1);
        const std::uint32_t offset =
            random_
                ? permuted(mix64(opt_.seed * 0x2545F4914F6CDD1DULL + static_cast<std::uint64_t>(s)),
                           i, others)
                : i;
        return static_cast<int>((static_cast<std::uint32_t>(s) + 1 + offset) %
                                static_cast<std::uint32_t>(n_));
    }
    void post_next(int s) {
        std::uint64_t &posted = posted_[static_cast<std::size_t>(s)];
        if (posted == per_node_) return;
        const auto i = static_cast<std::uint32_t>(posted % static_cast<std::uint64_t>(n_ - 1));
        ++posted;
        layer_->send(s, destination(s, i), opt_.message_bytes, 0);
    }
    WorkloadOptions opt_;
    int n_;
    std::uint64_t per_node_ = 0, remaining_ = 0, window_ = 0;
    bool random_ = true;
    std::vector<std::uint64_t> posted_;  // sends each node has posted so far
};

}  // namespace

std::unique_ptr<Workload> make_alltoall(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<AllToAll>(opt, net);
}

}  // namespace sansim
