// The sort's parallel-merge load (§5.3.4): every node issues remote-I/O transfers of a fixed
// size to random other nodes as a Poisson process, a given share of them reads (the payload
// comes back) and the rest writes. Open loop: runs until the time limit.
#include "traffic/workload.hpp"

namespace sansim {
namespace {

class Phase3b : public Workload {
  public:
    Phase3b(const WorkloadOptions &opt, Network &net)
        : opt_(opt), n_(opt.nodes > 0 ? opt.nodes : net.nodes()), rng_(opt.seed) {
        if (n_ < 2) throw std::invalid_argument("phase3b needs at least 2 nodes");
        if (opt.requests_per_s <= 0) throw std::invalid_argument("phase3b needs a positive rate");
    }
    void start(Network &net) override {
        for (int s = 0; s < n_; ++s) next(net, s);
    }
    void timer(Network &net, std::uint32_t arg) override {
        const int s = static_cast<int>(arg);
        std::uniform_int_distribution<int> pick(0, n_ - 2);
        int d = pick(rng_);
        if (d >= s) ++d;
        std::uniform_real_distribution<double> u(0.0, 1.0);
        net.start_transfer(s, d, opt_.transfer_bytes, u(rng_) < opt_.read_fraction, this, 0);
        next(net, s);
    }
    // Open loop: there is always more to send; only a drained window completes a run.
    bool finished() const override { return false; }
    bool open_loop() const override { return true; }
    void each_pair(const std::function<void(int, int)> &visit) const override {
        all_pairs(n_, visit);
    }
    bool reads() const override { return opt_.read_fraction > 0; }

  private:
    void next(Network &net, int s) {
        std::exponential_distribution<double> gap(opt_.requests_per_s);
        net.schedule_timer(net.now() + static_cast<Time>(gap(rng_) * 1e12), this,
                           static_cast<std::uint32_t>(s));
    }
    WorkloadOptions opt_;
    int n_;
    std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Workload> make_phase3b(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<Phase3b>(opt, net);
}

}  // namespace sansim
