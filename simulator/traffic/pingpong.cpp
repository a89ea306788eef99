// Ping-pong (§5.2.2.1): node 0 sends a message to node 1, which sends it back; `rounds` times.
#include "traffic/workload.hpp"

namespace sansim {
namespace {

class PingPong : public Workload {
  public:
    PingPong(const WorkloadOptions &opt, Network &net) : opt_(opt) {
        if (net.nodes() < 2) throw std::invalid_argument("pingpong needs 2 nodes");
        layer_ = std::make_unique<MessageLayer>(net, opt.messages, this);
        remaining_ = 2 * static_cast<std::uint64_t>(opt.rounds);
    }
    void start(Network &) override { layer_->send(0, 1, opt_.message_bytes, 0); }
    void message_done(Network &net, std::uint32_t, const Message &m) override {
        if (--remaining_ == 0) {
            net.stop();
            return;
        }
        layer_->send(m.dst, m.src, opt_.message_bytes, 0);
    }
    bool finished() const override { return remaining_ == 0; }
    double total_bytes() const override {
        return 2.0 * opt_.rounds * static_cast<double>(opt_.message_bytes);
    }
    void each_pair(const std::function<void(int, int)> &visit) const override {
        visit(0, 1);
        visit(1, 0);
    }

  private:
    WorkloadOptions opt_;
    std::uint64_t remaining_;
};

}  // namespace

std::unique_ptr<Workload> make_pingpong(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<PingPong>(opt, net);
}

}  // namespace sansim
