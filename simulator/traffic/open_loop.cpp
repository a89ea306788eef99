// Open-loop sources for the standard latency-versus-offered-load experiments: every node
// injects fixed-size transfers (one packet by default) independently of what the network
// delivers. Load is a fraction of the node's injection capacity: 1.0 fills its link(s) with
// data packets. Bernoulli: time is cut into slots of one transfer's time at full capacity and
// each slot injects with probability `load`; Poisson: exponential gaps of the same mean.
#include <algorithm>

#include "traffic/pattern.hpp"
#include "traffic/workload.hpp"

namespace sansim {
namespace {

// The router each node's first port is wired to, or its group (-1: none).
std::vector<int> node_routers(const Network &net, bool groups) {
    const Topology &t = net.topology();
    std::vector<int> of(static_cast<std::size_t>(t.nodes), -1);
    for (int n = 0; n < t.nodes; ++n) {
        const int dev = net.routing().peers[static_cast<std::size_t>(n)][0].dev;
        if (t.is_node(dev)) continue;
        const int r = dev - t.nodes;
        of[static_cast<std::size_t>(n)] = groups ? t.routers[static_cast<std::size_t>(r)].group : r;
    }
    return of;
}

class OpenLoop : public Workload {
  public:
    OpenLoop(const WorkloadOptions &opt, Network &net)
        : opt_(opt),
          n_(opt.nodes > 0 ? opt.nodes : net.nodes()),
          rng_(opt.seed),
          pattern_(opt.pattern, n_, opt.self, opt.hot_fraction, rng_, node_routers(net, true),
                   node_routers(net, false)) {
        if (!(opt.load > 0)) throw std::invalid_argument("openloop needs a positive --load");
        if (opt.injection != "bernoulli" && opt.injection != "poisson")
            throw std::invalid_argument("injection must be bernoulli or poisson, not '" +
                                        opt.injection + "'");
        bytes_ = opt.open_loop_bytes > 0 ? opt.open_loop_bytes
                                         : static_cast<std::uint64_t>(net.params().max_payload);
        for (int s = 0; s < n_; ++s) {
            // One transfer's time at the node's full injection capacity (MB/s = bytes/us).
            const double us = static_cast<double>(bytes_) / net.injection_capacity_mbps(s);
            slot_.push_back(std::max<Time>(1, from_us(us)));
        }
        next_slot_.assign(static_cast<std::size_t>(n_), 0);
    }
    void start(Network &net) override {
        for (int s = 0; s < n_; ++s)
            if (pattern_.sends(s)) schedule(net, s, true);
    }
    void timer(Network &net, std::uint32_t arg) override {
        const int s = static_cast<int>(arg);
        net.start_transfer(s, pattern_.next(s, rng_), bytes_, false, this, 0);
        schedule(net, s, false);
    }
    bool finished() const override { return false; }
    bool open_loop() const override { return true; }
    void each_pair(const std::function<void(int, int)> &visit) const override {
        pattern_.each_pair(visit);
    }
    double offered_load() const override { return opt_.load; }
    std::uint64_t transfer_bytes() const override { return bytes_; }

  private:
    void schedule(Network &net, int s, bool first) {
        const auto i = static_cast<std::size_t>(s);
        Time at;
        if (opt_.injection == "poisson") {
            std::exponential_distribution<double> gap(opt_.load);  // in slots
            at = net.now() + static_cast<Time>(gap(rng_) * static_cast<double>(slot_[i]));
        } else {
            // Slots without an injection before the next one: geometric, none when load >= 1.
            long skip = 0;
            if (opt_.load < 1) skip = std::geometric_distribution<long>(opt_.load)(rng_);
            next_slot_[i] += (first ? 0 : 1) + skip;
            at = next_slot_[i] * slot_[i];
        }
        net.schedule_timer(at, this, static_cast<std::uint32_t>(s));
    }

    WorkloadOptions opt_;
    int n_;
    std::mt19937_64 rng_;
    DestinationPattern pattern_;
    std::uint64_t bytes_ = 0;
    std::vector<Time> slot_;
    std::vector<long> next_slot_;
};

}  // namespace

std::unique_ptr<Workload> make_open_loop(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<OpenLoop>(opt, net);
}

}  // namespace sansim
