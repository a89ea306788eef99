// The paper's aggregate-bandwidth test (§5.2.2.2): every node posts one long send to every
// other node (in a random order) and re-posts each as it completes, `rounds` times each, so
// sends proceed in completion order with no attempt to avoid hot spots.
#include <algorithm>

#include "traffic/workload.hpp"

namespace sansim {
namespace {

class AllToAll : public Workload {
  public:
    AllToAll(const WorkloadOptions &opt, Network &net)
        : opt_(opt), n_(opt.nodes > 0 ? opt.nodes : net.nodes()) {
        if (n_ < 2) throw std::invalid_argument("alltoall needs at least 2 nodes");
        layer_ = std::make_unique<MessageLayer>(net, opt.messages, this);
        remaining_ = static_cast<std::uint64_t>(n_) * static_cast<std::uint64_t>(n_ - 1) *
                     static_cast<std::uint64_t>(opt.rounds);
        sent_.assign(static_cast<std::size_t>(n_ * n_), 0);
    }
    void start(Network &) override {
        std::mt19937_64 rng(opt_.seed);
        for (int s = 0; s < n_; ++s) {
            std::vector<int> peers;
            for (int d = 0; d < n_; ++d)
                if (d != s) peers.push_back(d);
            std::shuffle(peers.begin(), peers.end(), rng);
            for (int d : peers) post(s, d);
        }
    }
    void message_done(Network &net, std::uint32_t, const Message &m) override {
        if (--remaining_ == 0) net.stop();
        if (sent_[static_cast<std::size_t>(m.src * n_ + m.dst)] < opt_.rounds) post(m.src, m.dst);
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
    void post(int s, int d) {
        ++sent_[static_cast<std::size_t>(s * n_ + d)];
        layer_->send(s, d, opt_.message_bytes, 0);
    }
    WorkloadOptions opt_;
    int n_;
    std::uint64_t remaining_;
    std::vector<int> sent_;
};

}  // namespace

std::unique_ptr<Workload> make_alltoall(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<AllToAll>(opt, net);
}

}  // namespace sansim
