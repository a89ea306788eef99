// Phase 3a: exact parallel selection. Every node holds one sorted work file;
// for P output partitions we find, in every node's file, where each
// partition starts, so that partition sizes differ by at most one record for
// any key distribution. Records are ordered by (key, node, position): ties
// between equal keys are split by node and position, so the order is total.
//
// The coordinator (the monitor) keeps, per split point and node, a window of
// positions known to contain that node's boundary. Each round has two small
// exchanges with every node: the node sends a few evenly spaced samples from
// each of its windows (or the whole window once it is small), then counts,
// by binary search in its file, how many of its records precede the pivots
// the coordinator chose from those samples. Exact counts move the windows'
// ends; a split whose windows were sent whole is resolved by a merge. The
// windows shrink by a factor of about samples / (4 x nodes) per round.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "global_order.hpp"
#include "sortapp/status.hpp"

namespace sortapp::cluster {

struct Window {
    uint64_t lo = 0, hi = 0;  // the boundary lies in [lo, hi]
};

// Round, part 1: for each split, the node's window; the node answers with
// samples (all of the window when it holds no more than `samples` records).
struct SampleRequest {
    uint32_t samples = 0;
    std::vector<Window> windows;  // one per split
    std::vector<uint8_t> whole;   // per split: 1 = send the whole window
};
struct SampleReply {
    std::vector<std::vector<Element>> per_split;  // ascending; node = the answering node
};

// Round, part 2: for each split, pivots; the node answers with how many of its
// records precede each pivot in the global order.
struct CountRequest {
    std::vector<Window> windows;  // the search may stay inside them
    std::vector<std::vector<Element>> pivots;
};
struct CountReply {
    std::vector<std::vector<uint64_t>> counts;
};

// What a node answers with: its sorted records, read by position.
class SortedSource {
  public:
    virtual ~SortedSource() = default;
    virtual uint64_t size() const = 0;
    // The key of the record at pos (pos < size()).
    virtual std::string key(uint64_t pos) const = 0;
};

// The node's side of a round.
SampleReply answer_samples(const SortedSource &source, uint32_t node, const SampleRequest &request);
CountReply answer_counts(const SortedSource &source, uint32_t node, const CountRequest &request);

// The coordinator's side.
class Selector {
  public:
    // sizes[i]: records on node i; parts: output partitions (normally the number of nodes).
    Selector(std::vector<uint64_t> sizes, uint32_t parts, uint32_t samples = 0);

    bool done() const;
    uint32_t nodes() const { return static_cast<uint32_t>(sizes_.size()); }
    unsigned rounds() const { return rounds_; }

    SampleRequest sample_request(uint32_t node) const;
    // Whether a node's reply fits this round (the splits, its windows, its rank): an error
    // naming what does not, for a reply that came from outside the process.
    Status check_samples(uint32_t node, const SampleReply &reply) const;
    // Call once per node with its reply, then pick the pivots. Throws std::invalid_argument
    // on a reply check_samples refuses.
    void take_samples(uint32_t node, const SampleReply &reply);
    void choose_pivots();
    CountRequest count_request(uint32_t node) const;
    Status check_counts(uint32_t node, const CountReply &reply) const;
    // Call once per node with its reply; then the round is over. Throws
    // std::invalid_argument on a reply check_counts refuses.
    void take_counts(uint32_t node, const CountReply &reply);

    // starts[j][i]: where partition j begins in node i's file; j = 0..parts
    // (starts[0][i] = 0, starts[parts][i] = sizes[i]). Valid once done().
    std::vector<std::vector<uint64_t>> starts() const;
    // The global rank each split must have: floor(j * total / parts).
    uint64_t target(uint32_t split) const;

  private:
    struct Split {
        uint64_t target = 0;
        std::vector<Window> windows;  // per node
        bool resolved = false;
        std::vector<std::vector<Element>> samples;        // this round, per node
        std::vector<Element> pivots;                      // this round
        std::vector<uint64_t> pivot_rank;                 // summed over nodes
        std::vector<std::vector<uint64_t>> pivot_counts;  // [pivot][node]
        bool whole = false;  // a round moved nothing: ask for the windows whole
    };
    void resolve_exactly(Split &s);
    void bracket_samples(const Split &s, uint64_t t, const Element **lo, const Element **hi) const;

    std::vector<uint64_t> sizes_;
    uint32_t parts_;
    uint32_t samples_;
    std::vector<Split> splits_;  // splits 1..parts-1
    unsigned rounds_ = 0;
};

// Runs the whole selection in one process (tests, single-node use).
std::vector<std::vector<uint64_t>> select_local(const std::vector<const SortedSource *> &nodes,
                                                uint32_t parts, unsigned *rounds = nullptr);

}  // namespace sortapp::cluster
