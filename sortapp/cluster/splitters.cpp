// The river sort's partitioning (splitters.hpp).
#include "splitters.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <unordered_set>

namespace sortapp::cluster {

uint64_t samples_wanted(uint32_t parts, uint64_t total_records, double tolerance) {
    if (parts <= 1) return 0;
    const double want = std::ceil(16.0 * (parts - 1) / (tolerance * tolerance));
    return std::min<uint64_t>(total_records, static_cast<uint64_t>(want));
}

std::vector<uint64_t> samples_per_node(const std::vector<uint64_t> &records, uint64_t wanted) {
    uint64_t total = 0;
    for (uint64_t r : records) total += r;
    std::vector<uint64_t> out(records.size(), 0);
    if (total == 0) return out;
    wanted = std::min(wanted, total);
    // Largest remainder: the shares sum to `wanted` and none exceeds its node's records.
    uint64_t given = 0;
    std::vector<std::pair<double, size_t>> rest;
    for (size_t i = 0; i < records.size(); ++i) {
        const double exact = static_cast<double>(wanted) * records[i] / total;
        out[i] = std::min(records[i], static_cast<uint64_t>(exact));
        given += out[i];
        rest.emplace_back(exact - out[i], i);
    }
    std::sort(rest.begin(), rest.end(), std::greater<>());
    for (size_t k = 0; given < wanted && k < rest.size() * 2; ++k) {
        size_t i = rest[k % rest.size()].second;
        if (out[i] < records[i]) ++out[i], ++given;
    }
    return out;
}

std::vector<uint64_t> sample_positions(uint64_t records, uint64_t count, uint64_t seed) {
    std::vector<uint64_t> pos;
    if (count >= records) {
        pos.resize(records);
        for (uint64_t i = 0; i < records; ++i) pos[i] = i;
        return pos;
    }
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<uint64_t> any(0, records - 1);
    std::unordered_set<uint64_t> taken;
    while (taken.size() < count) taken.insert(any(gen));
    pos.assign(taken.begin(), taken.end());
    std::sort(pos.begin(), pos.end());
    return pos;
}

std::vector<Element> choose_splitters(std::vector<Element> samples, uint32_t parts) {
    std::vector<Element> out;
    if (parts <= 1) return out;
    std::sort(samples.begin(), samples.end(),
              [](const Element &a, const Element &b) { return compare(a, b) < 0; });
    const uint64_t n = samples.size();
    for (uint32_t k = 1; k < parts; ++k) {
        if (n == 0) {
            out.push_back(Element{});
            continue;
        }
        uint64_t at = std::min<uint64_t>(n - 1, n * k / parts);
        out.push_back(samples[at]);
    }
    return out;
}

Status check_splitters(const std::vector<Element> &s, uint32_t parts, size_t key_size) {
    if (s.size() + 1 != parts)
        return Status::error(std::to_string(s.size()) + " splitters for " + std::to_string(parts) +
                             " partitions");
    for (size_t i = 0; i < s.size(); ++i) {
        // An empty key: no samples at all (every input empty), so every partition is empty.
        if (s[i].key.size() != key_size && !s[i].key.empty())
            return Status::error("splitter " + std::to_string(i) + " has a key of " +
                                 std::to_string(s[i].key.size()) + " bytes, not " +
                                 std::to_string(key_size));
        if (i > 0 && compare(s[i - 1], s[i]) > 0)
            return Status::error("splitters are not ascending at " + std::to_string(i));
    }
    return Status::ok();
}

Partitioner::Partitioner(const std::vector<Element> &splitters, size_t key_size, uint32_t node)
    : key_size_(key_size), self_(node) {
    for (const Element &e : splitters) {
        std::string k = e.key;
        k.resize(key_size, '\0');
        keys_ += k;
        prefix_.push_back(prefix(reinterpret_cast<const uint8_t *>(k.data())));
        node_.push_back(e.node);
        pos_.push_back(e.pos);
    }
}

uint64_t Partitioner::prefix(const uint8_t *key) const {
    uint64_t v = 0;
    std::memcpy(&v, key, std::min<size_t>(key_size_, sizeof v));
    return __builtin_bswap64(v);  // big-endian: compares like memcmp
}

int Partitioner::compare(size_t s, const uint8_t *key, uint64_t prefix, uint64_t pos) const {
    // Most records differ from a splitter within their first 8 bytes.
    if (prefix != prefix_[s]) return prefix < prefix_[s] ? -1 : 1;
    int c = std::memcmp(key, keys_.data() + s * key_size_, key_size_);
    if (c != 0) return c;
    if (self_ != node_[s]) return self_ < node_[s] ? -1 : 1;
    return pos < pos_[s] ? -1 : pos > pos_[s] ? 1 : 0;
}

int Partitioner::pick(const uint8_t *key, uint64_t pos) const {
    // Partition k holds [splitter k-1, splitter k): the first splitter above the record.
    const uint64_t p = prefix(key);
    size_t lo = 0, hi = node_.size();
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (compare(mid, key, p, pos) < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return static_cast<int>(lo);
}

}  // namespace sortapp::cluster
