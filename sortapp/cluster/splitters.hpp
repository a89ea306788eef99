// The river sort's partitioning (NOW-Sort's, without its assumption of uniform keys): every
// node sends keys sampled at random positions of its input, the monitor sorts them in the
// global order (key, node, position) and takes nodes - 1 evenly spaced ones as splitters, and
// every record goes to the node whose range holds its (key, node, position). Ties between equal
// keys are split by node and position, so any key distribution, all-equal keys included,
// partitions as evenly as the sample allows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "global_order.hpp"
#include "sortapp/status.hpp"

namespace sortapp::cluster {

// How many samples the whole job takes: enough that every partition is within `tolerance`
// (a fraction) of the mean at about four standard deviations, i.e. 16 (parts - 1) /
// tolerance^2, or every record when there are fewer.
uint64_t samples_wanted(uint32_t parts, uint64_t total_records, double tolerance = 0.04);

// Node i's share of `wanted` samples: proportional to its records, so that the samples are
// uniform over all records. Sums to min(wanted, total).
std::vector<uint64_t> samples_per_node(const std::vector<uint64_t> &records, uint64_t wanted);

// `count` distinct positions in [0, records), ascending, from a seeded generator; all of them
// when count >= records.
std::vector<uint64_t> sample_positions(uint64_t records, uint64_t count, uint64_t seed);

// parts - 1 splitters from the samples (any order): the samples at ranks k * n / parts in the
// global order. With fewer samples than that, the last one repeats (empty partitions).
std::vector<Element> choose_splitters(std::vector<Element> samples, uint32_t parts);

// Splitters from another process: parts - 1 of them, keys of key_size bytes, ascending.
Status check_splitters(const std::vector<Element> &splitters, uint32_t parts, size_t key_size);

// Which partition a record of this node goes to.
class Partitioner {
  public:
    Partitioner(const std::vector<Element> &splitters, size_t key_size, uint32_t node);
    // key: the record's key_size key bytes; pos: the record's index in this node's input.
    int pick(const uint8_t *key, uint64_t pos) const;
    uint32_t parts() const { return static_cast<uint32_t>(node_.size()) + 1; }

  private:
    // <0, 0, >0: the record (key, its first bytes as `prefix`, pos) against splitter s.
    int compare(size_t s, const uint8_t *key, uint64_t prefix, uint64_t pos) const;
    // The key's first (up to) 8 bytes as a number that orders like the bytes.
    uint64_t prefix(const uint8_t *key) const;

    size_t key_size_;
    uint32_t self_;
    std::string keys_;              // the splitters' keys, back to back
    std::vector<uint64_t> prefix_;  // their prefix()
    std::vector<uint32_t> node_;
    std::vector<uint64_t> pos_;
};

}  // namespace sortapp::cluster
