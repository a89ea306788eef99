// Replay of libmsg message traces (VIADUCT_TRACE): each rank's sends are injected in the
// order it posted them, and a send waits for every operation its rank saw complete before
// posting it (receives and earlier sends), then for the compute gap the trace shows after the
// latest of them. The k-th receive at rank r of messages from s with tag t is the k-th send
// from s to r with tag t (libmsg delivers one sender's messages of a tag in order).
// Receives are taken as posted in time; self messages and failed operations are left out.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "traffic/replay_trace.hpp"
#include "traffic/workload.hpp"

namespace sansim {
namespace {

struct Op {
    int rank = 0, peer = 0;
    bool send = false, eager = false;
    int tag = 0;
    std::uint64_t bytes = 0;
    Time post = 0, done = 0;  // recorded, from the earliest post of the whole trace
    Time sim_done = -1;
    std::int64_t match = -1;  // a send's receive op, and the other way round
};

struct RankState {
    std::vector<std::uint32_t> sends;    // in post order
    std::vector<std::uint32_t> by_done;  // every op, in recorded completion order
    std::size_t next_send = 0, next_done = 0;
    Time offset = 0;  // how far the replay runs behind the recording at this rank
};

class Replay : public Workload {
  public:
    Replay(const WorkloadOptions &opt, Network &net) : opt_(opt) {
        const std::vector<RankTrace> traces = load_traces(opt.replay_path);
        ranks_ = traces.front().size;
        const int nodes = opt.nodes > 0 ? opt.nodes : net.nodes();
        if (opt.replay_map == "identity" && ranks_ > nodes)
            throw std::invalid_argument("replay: " + std::to_string(ranks_) + " ranks on " +
                                        std::to_string(nodes) +
                                        " nodes (use --replay-map spread or a larger topology)");
        if (opt.replay_map != "identity" && opt.replay_map != "spread")
            throw std::invalid_argument("--replay-map: identity or spread");
        if (opt.replay_map == "spread" && ranks_ > nodes)
            throw std::invalid_argument("replay: more ranks than nodes");
        for (int r = 0; r < ranks_; ++r)
            node_.push_back(opt.replay_map == "identity"
                                ? r
                                : static_cast<int>(static_cast<long>(r) * nodes / ranks_));
        take_ops(traces, series_reach_us(net));
        match_receives();
        order_ranks();
        layer_ = std::make_unique<MessageLayer>(net, opt.messages, this);
    }
    void start(Network &net) override {
        if (remaining_ == 0) net.stop();
        for (int r = 0; r < ranks_; ++r) advance(net, r);
    }
    void timer(Network &, std::uint32_t arg) override {
        const Op &o = ops_[arg];
        const Time setup = o.eager ? from_us(opt_.eager_us) : -1;
        const std::uint32_t id =
            layer_->send(node_[static_cast<std::size_t>(o.rank)],
                         node_[static_cast<std::size_t>(o.peer)], o.bytes, arg, setup);
        if (message_op_.size() <= id) message_op_.resize(id + 1);
        message_op_[id] = arg;
    }
    void message_done(Network &net, std::uint32_t id, const Message &) override {
        Op &s = ops_[message_op_[id]];
        s.sim_done = net.now();
        predicted_ = std::max(predicted_, net.now());
        if (s.match >= 0) ops_[static_cast<std::size_t>(s.match)].sim_done = net.now();
        advance(net, s.rank);
        advance(net, s.peer);
        if (--remaining_ == 0) net.stop();
    }
    bool finished() const override { return remaining_ == 0; }
    double total_bytes() const override { return static_cast<double>(bytes_); }
    void each_pair(const std::function<void(int, int)> &visit) const override {
        std::set<std::pair<int, int>> seen;
        for (const Op &o : ops_)
            if (o.send && seen.insert({o.rank, o.peer}).second)
                visit(node_[static_cast<std::size_t>(o.rank)],
                      node_[static_cast<std::size_t>(o.peer)]);
    }
    bool replay_summary(ReplaySummary *s) const override {
        s->ranks = ranks_;
        s->messages = messages_;
        s->bytes = bytes_;
        s->unmatched_receives = unmatched_;
        s->dropped = dropped_;
        s->recorded_us = to_us(recorded_);
        s->predicted_us = to_us(predicted_);
        return true;
    }

  private:
    void take_ops(const std::vector<RankTrace> &traces, double reach_us);
    void match_receives();
    void order_ranks();
    void advance(Network &net, int rank);

    WorkloadOptions opt_;
    int ranks_ = 0;
    std::vector<int> node_;
    std::vector<Op> ops_;
    std::vector<RankState> state_;
    std::vector<std::uint32_t> message_op_;
    std::uint64_t remaining_ = 0, messages_ = 0, bytes_ = 0, unmatched_ = 0, dropped_ = 0;
    Time recorded_ = 0, predicted_ = 0;
};

void Replay::take_ops(const std::vector<RankTrace> &traces, double reach_us) {
    std::int64_t t0 = INT64_MAX, end = INT64_MIN;
    for (const RankTrace &t : traces) {
        dropped_ += t.dropped;
        for (const TraceOp &o : t.ops)
            if ((o.status == 0 || o.status == -3) && o.peer != t.rank &&
                o.protocol != TraceProtocol::self) {
                t0 = std::min(t0, o.post_ns);
                end = std::max(end, o.done_ns);
            }
    }
    if (t0 == INT64_MAX) return;
    if (end - t0 > std::int64_t{1} << 42)
        throw TraceError("replay: the traces span more than an hour; are they one job's?");
    if (static_cast<double>(end - t0) / 1e3 > reach_us)
        throw TraceError("replay: the traces span " + std::to_string((end - t0) / 1000000) +
                         " ms, past what 10^7 bins of the NICs' time series reach: raise "
                         "--series-bin-us");
    for (const RankTrace &t : traces)
        for (const TraceOp &o : t.ops) {
            if ((o.status != 0 && o.status != -3) || o.peer == t.rank ||
                o.protocol == TraceProtocol::self)
                continue;
            Op op;
            op.rank = t.rank;
            op.peer = o.peer;
            op.send = o.send;
            op.eager = o.protocol == TraceProtocol::eager;
            op.tag = o.tag;
            op.bytes = o.bytes;
            op.post = (o.post_ns - t0) * kNs;
            op.done = (o.done_ns - t0) * kNs;
            ops_.push_back(op);
        }
    if (ops_.size() > 0xFFFFFFFFu) throw TraceError("replay: more than 2^32 operations");
    recorded_ = (end - t0) * kNs;
}

void Replay::match_receives() {
    // Per (sender, receiver, tag): sends and receives, each in post order.
    std::map<std::tuple<int, int, int>,
             std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>>
        lanes;
    std::vector<std::uint32_t> order(ops_.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return ops_[a].post < ops_[b].post; });
    for (std::uint32_t i : order) {
        const Op &o = ops_[i];
        auto &lane =
            lanes[o.send ? std::tuple{o.rank, o.peer, o.tag} : std::tuple{o.peer, o.rank, o.tag}];
        (o.send ? lane.first : lane.second).push_back(i);
    }
    for (auto &[key, lane] : lanes) {
        const std::size_t n = std::min(lane.first.size(), lane.second.size());
        for (std::size_t k = 0; k < n; ++k) {
            ops_[lane.first[k]].match = lane.second[k];
            ops_[lane.second[k]].match = lane.first[k];
        }
        unmatched_ += lane.second.size() - n;
    }
}

void Replay::order_ranks() {
    state_.resize(static_cast<std::size_t>(ranks_));
    for (std::uint32_t i = 0; i < ops_.size(); ++i) {
        Op &o = ops_[i];
        if (!o.send && o.match < 0) continue;  // nothing will complete it: not waited for
        RankState &s = state_[static_cast<std::size_t>(o.rank)];
        s.by_done.push_back(i);
        if (o.send) {
            s.sends.push_back(i);
            ++remaining_;
            ++messages_;
            bytes_ += o.bytes;
        }
    }
    for (RankState &s : state_) {
        std::stable_sort(s.sends.begin(), s.sends.end(), [&](std::uint32_t a, std::uint32_t b) {
            return ops_[a].post < ops_[b].post;
        });
        std::stable_sort(s.by_done.begin(), s.by_done.end(), [&](std::uint32_t a, std::uint32_t b) {
            return ops_[a].done < ops_[b].done;
        });
    }
}

// Injects the rank's next sends whose recorded dependencies have completed in the replay.
void Replay::advance(Network &net, int rank) {
    RankState &s = state_[static_cast<std::size_t>(rank)];
    while (s.next_send < s.sends.size()) {
        const Op &send = ops_[s.sends[s.next_send]];
        while (s.next_done < s.by_done.size()) {
            const Op &dep = ops_[s.by_done[s.next_done]];
            if (dep.done >= send.post) break;
            if (dep.sim_done < 0) return;  // still running in the replay
            s.offset = std::max(s.offset, dep.sim_done - dep.done);
            ++s.next_done;
        }
        net.schedule_timer(std::max(net.now(), send.post + s.offset), this, s.sends[s.next_send]);
        ++s.next_send;
    }
}

}  // namespace

std::unique_ptr<Workload> make_replay(const WorkloadOptions &opt, Network &net) {
    return std::make_unique<Replay>(opt, net);
}

}  // namespace sansim
