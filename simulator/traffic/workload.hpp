// Workloads: what the nodes ask of the network. Each one runs on nodes 0..nodes-1 of the
// topology and stops the network when it is done (or runs until the time limit).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "model/network.hpp"
#include "traffic/message_layer.hpp"

namespace sansim {

struct WorkloadOptions {
    // alltoall, permutation, hotspot, pingpong, phase3b, trace, replay, openloop
    std::string kind = "alltoall";
    int nodes = 0;  // 0: every node of the topology
    std::uint64_t message_bytes = 512 * 1024;
    int rounds = 1;
    // alltoall: sends each node keeps posted (0: all at once), and their order (random per
    // node, or pairwise: node s's i-th to s + i).
    int alltoall_window = 32;
    std::string alltoall_order = "random";
    double hot_fraction = 1.0;            // hotspot: share of messages to node 0
    std::uint64_t transfer_bytes = 4096;  // phase3b request size
    double read_fraction = 0.5;           // phase3b
    double requests_per_s = 4700.0;       // phase3b, per node
    std::string trace_path;
    // replay: libmsg trace files (a directory, path or glob pattern), how ranks map onto
    // nodes (identity: rank r on node r; spread: evenly over the nodes), and the per-message
    // overhead of an eager message (long ones take messages.setup_us, their handshake).
    std::string replay_path;
    std::string replay_map = "identity";
    double eager_us = 1.0;
    // openloop: each node injects transfers of open_loop_bytes (0: one full packet) at `load`
    // times its injection capacity, by Bernoulli trials per transfer time or as a Poisson
    // process, to destinations drawn from `pattern` (traffic/pattern.hpp).
    std::string pattern = "uniform";
    std::string injection = "bernoulli";  // or poisson
    double load = 0.1;
    bool self = false;  // destinations include the source itself
    std::uint64_t open_loop_bytes = 0;
    std::uint64_t seed = 1;
    MessageOptions messages;
};

struct ReplaySummary {
    int ranks = 0;
    std::uint64_t messages = 0, bytes = 0;
    std::uint64_t unmatched_receives = 0;  // receives no recorded send matched (not waited for)
    std::uint64_t dropped = 0;             // records the traces' caps left out
    double recorded_us = 0, predicted_us = 0;
};

class Workload : public TransferClient, public MessageListener {
  public:
    ~Workload() override = default;
    virtual void start(Network &net) = 0;
    // Messages or transfers still expected; non-zero at the end means the run was cut short.
    virtual bool finished() const = 0;
    // Sources that never finish by themselves (phase3b): a run ends at its time limit or
    // once its measurement window is drained.
    virtual bool open_loop() const { return false; }
    // Every (source, destination) pair the workload may send between: the fabric must
    // connect these, and only these.
    virtual void each_pair(const std::function<void(int, int)> &visit) const = 0;
    // Whether it issues reads (whose data returns on the fabric whatever the acknowledgements).
    virtual bool reads() const { return false; }
    // The payload it moves in all, known before it starts (so a run too big to simulate
    // without a time limit can be refused); < 0 for sources that never stop.
    virtual double total_bytes() const { return -1; }
    // Open-loop sources: the offered load as a fraction of injection capacity; else < 0.
    virtual double offered_load() const { return -1; }
    // The size of the transfers it issues, when they all have one; else 0.
    virtual std::uint64_t transfer_bytes() const { return 0; }
    // A replayed trace: the time it recorded and the time the simulation predicts.
    virtual bool replay_summary(ReplaySummary *) const { return false; }
    const MessageLayer *messages() const { return layer_.get(); }
    void transfer_done(Network &, std::uint32_t, std::uint64_t) override {}
    void message_done(Network &, std::uint32_t, const Message &) override {}

  protected:
    std::unique_ptr<MessageLayer> layer_;
};

// The NICs' outstanding-request series keeps a bin per --series-bin-us of simulated time, so
// a workload whose recorded times reach far (trace, replay) is bounded by this many bins.
constexpr double kMaxSeriesBins = 1e7;
// The latest time (us) such a workload may reach on this network.
double series_reach_us(const Network &net);

// Every ordered pair of distinct nodes among 0..nodes-1.
void all_pairs(int nodes, const std::function<void(int, int)> &visit);

// Throws std::invalid_argument on bad options (unknown kind, too many nodes, bad trace file).
std::unique_ptr<Workload> make_workload(const WorkloadOptions &opt, Network &net);

std::unique_ptr<Workload> make_alltoall(const WorkloadOptions &opt, Network &net);
std::unique_ptr<Workload> make_permutation(const WorkloadOptions &opt, Network &net, bool hotspot);
std::unique_ptr<Workload> make_pingpong(const WorkloadOptions &opt, Network &net);
std::unique_ptr<Workload> make_phase3b(const WorkloadOptions &opt, Network &net);
std::unique_ptr<Workload> make_trace(const WorkloadOptions &opt, Network &net);
std::unique_ptr<Workload> make_replay(const WorkloadOptions &opt, Network &net);
std::unique_ptr<Workload> make_open_loop(const WorkloadOptions &opt, Network &net);

}  // namespace sansim
