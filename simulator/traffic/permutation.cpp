// Permutation: node i sends `rounds` messages, one after another, to perm(i), a random
// derangement. Hot spot: each message goes to node 0 with probability hot_fraction, otherwise
// to a uniformly chosen other node (node 0 itself sends uniformly).
#include <algorithm>

#include "traffic/workload.hpp"

namespace sansim {
namespace {

class Permutation : public Workload {
  public:
    Permutation(const WorkloadOptions &opt, Network &net, bool hotspot)
        : opt_(opt),
          n_(opt.nodes > 0 ? opt.nodes : net.nodes()),
          hotspot_(hotspot),
          rng_(opt.seed) {
        if (n_ < 2) throw std::invalid_argument("permutation/hotspot need at least 2 nodes");
        layer_ = std::make_unique<MessageLayer>(net, opt.messages, this);
        left_.assign(static_cast<std::size_t>(n_), opt.rounds);
        remaining_ = static_cast<std::uint64_t>(n_) * static_cast<std::uint64_t>(opt.rounds);
        perm_.resize(static_cast<std::size_t>(n_));
        for (int i = 0; i < n_; ++i) perm_[static_cast<std::size_t>(i)] = i;
        // A random cyclic shift of a shuffled order is a derangement.
        std::vector<int> order = perm_;
        std::shuffle(order.begin(), order.end(), rng_);
        for (int i = 0; i < n_; ++i)
            perm_[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] =
                order[static_cast<std::size_t>((i + 1) % n_)];
    }
    void start(Network &) override {
        for (int s = 0; s < n_; ++s) post(s);
    }
    void message_done(Network &net, std::uint32_t, const Message &m) override {
        if (--remaining_ == 0) net.stop();
        if (left_[static_cast<std::size_t>(m.src)] > 0) post(m.src);
    }
    bool finished() const override { return remaining_ == 0; }
    double total_bytes() const override {
        return static_cast<double>(n_) * opt_.rounds * static_cast<double>(opt_.message_bytes);
    }
    void each_pair(const std::function<void(int, int)> &visit) const override {
        if (hotspot_) {
            all_pairs(n_, visit);
            return;
        }
        for (int s = 0; s < n_; ++s) visit(s, perm_[static_cast<std::size_t>(s)]);
    }

  private:
    int target(int s) {
        if (!hotspot_) return perm_[static_cast<std::size_t>(s)];
        std::uniform_real_distribution<double> u(0.0, 1.0);
        if (s != 0 && u(rng_) < opt_.hot_fraction) return 0;
        std::uniform_int_distribution<int> pick(0, n_ - 2);
        const int d = pick(rng_);
        return d >= s ? d + 1 : d;
    }
    void post(int s) {
        --left_[static_cast<std::size_t>(s)];
        layer_->send(s, target(s), opt_.message_bytes, 0);
    }
    WorkloadOptions opt_;
    int n_;
    bool hotspot_;
    std::mt19937_64 rng_;
    std::vector<int> perm_, left_;
    std::uint64_t remaining_;
};

}  // namespace

std::unique_ptr<Workload> make_permutation(const WorkloadOptions &opt, Network &net, bool hotspot) {
    return std::make_unique<Permutation>(opt, net, hotspot);
}

}  // namespace sansim
