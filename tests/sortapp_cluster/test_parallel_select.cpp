// Phase 3a's exact parallel selection against a brute-force cut of the globally sorted
// (key, node, position) sequence: every distribution of keys, empty nodes, any node count.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <stdexcept>

#include "parallel_select.hpp"

using sortapp::cluster::Element;
using sortapp::cluster::SortedSource;

namespace {

class VectorSource final : public SortedSource {
  public:
    explicit VectorSource(std::vector<std::string> keys) : keys_(std::move(keys)) {
        std::sort(keys_.begin(), keys_.end());
    }
    uint64_t size() const override { return keys_.size(); }
    std::string key(uint64_t pos) const override { return keys_.at(pos); }
    const std::vector<std::string> &keys() const { return keys_; }

  private:
    std::vector<std::string> keys_;
};

enum class Dist { Uniform, FewDistinct, AllEqual, Skewed };

std::string make_key(Dist d, std::mt19937_64 &rng, size_t key_size) {
    std::string k(key_size, '\0');
    switch (d) {
        case Dist::Uniform:
            for (char &c : k) c = static_cast<char>(rng());
            break;
        case Dist::FewDistinct:
            k[0] = static_cast<char>(rng() % 3);
            break;
        case Dist::AllEqual:
            k.assign(key_size, 'x');
            break;
        case Dist::Skewed: {
            // Most keys share their high-order bytes; a few spread out.
            unsigned r = static_cast<unsigned>(rng() % 100);
            k[0] = static_cast<char>(r < 90 ? 0 : rng());
            k[1] = static_cast<char>(r < 70 ? 0 : rng());
            for (size_t i = 2; i < key_size; ++i) k[i] = static_cast<char>(rng() % 4);
            break;
        }
    }
    return k;
}

// The starts a brute-force global sort gives.
std::vector<std::vector<uint64_t>> brute_force(const std::vector<VectorSource> &nodes,
                                               uint32_t parts) {
    std::vector<Element> all;
    for (uint32_t i = 0; i < nodes.size(); ++i)
        for (uint64_t p = 0; p < nodes[i].size(); ++p) all.push_back({nodes[i].key(p), i, p});
    std::sort(all.begin(), all.end(),
              [](const Element &a, const Element &b) { return compare(a, b) < 0; });
    std::vector<std::vector<uint64_t>> starts;
    const uint64_t total = all.size();
    for (uint32_t j = 0; j <= parts; ++j) {
        uint64_t cut = total * j / parts;
        std::vector<uint64_t> row(nodes.size(), 0);
        for (uint64_t r = 0; r < cut; ++r) ++row[all[r].node];
        starts.push_back(row);
    }
    return starts;
}

void check(Dist d, const std::vector<size_t> &sizes, uint64_t seed, size_t key_size = 10,
           unsigned max_rounds = 64) {
    std::mt19937_64 rng(seed);
    std::vector<VectorSource> nodes;
    for (size_t n : sizes) {
        std::vector<std::string> keys;
        for (size_t i = 0; i < n; ++i) keys.push_back(make_key(d, rng, key_size));
        nodes.emplace_back(std::move(keys));
    }
    std::vector<const SortedSource *> views;
    for (const auto &n : nodes) views.push_back(&n);
    const auto parts = static_cast<uint32_t>(sizes.size());
    unsigned rounds = 0;
    auto got = sortapp::cluster::select_local(views, parts, &rounds);
    auto want = brute_force(nodes, parts);
    INFO("distribution " << static_cast<int>(d) << ", " << sizes.size() << " nodes, seed " << seed
                         << ", rounds " << rounds);
    REQUIRE(got == want);
    CHECK(rounds <= max_rounds);
    // Partition sizes differ by at most one record.
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t j = 0; j < parts; ++j) {
        uint64_t size = 0;
        for (size_t i = 0; i < sizes.size(); ++i) size += got[j + 1][i] - got[j][i];
        lo = std::min(lo, size);
        hi = std::max(hi, size);
    }
    CHECK(hi - lo <= 1);
}

}  // namespace

TEST_CASE("exact selection matches a global sort for every key distribution", "[select]") {
    const Dist d = GENERATE(Dist::Uniform, Dist::FewDistinct, Dist::AllEqual, Dist::Skewed);
    const int nodes = GENERATE(1, 2, 3, 4, 8);
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        std::mt19937_64 rng(seed * 31 + static_cast<uint64_t>(nodes));
        std::vector<size_t> sizes;
        for (int i = 0; i < nodes; ++i) sizes.push_back(rng() % 3000);
        check(d, sizes, seed);
    }
}

TEST_CASE("exact selection with empty nodes, tiny nodes and lopsided sizes", "[select]") {
    const Dist d = GENERATE(Dist::Uniform, Dist::AllEqual, Dist::Skewed);
    check(d, {0, 0, 0}, 1);
    check(d, {0, 5, 0, 0}, 2);
    check(d, {1, 0}, 3);
    check(d, {1, 1, 1}, 4);
    check(d, {2, 0, 1, 7}, 5);
    check(d, {100000, 3, 0, 17}, 6);
    check(d, {0, 50000, 50000, 1}, 7);
    check(d, {257, 129, 65, 1025, 4097, 0, 1, 2}, 8);
}

TEST_CASE("exact selection on large inputs needs few rounds", "[select]") {
    const Dist d = GENERATE(Dist::Uniform, Dist::Skewed, Dist::FewDistinct);
    // 4 x 100,000 records: windows shrink many times per round.
    check(d, {100000, 100000, 100000, 100000}, 11, 10, 8);
}

TEST_CASE("phase 3a replies that do not fit the round are refused by name", "[select]") {
    using sortapp::cluster::CountReply;
    using sortapp::cluster::SampleReply;
    using sortapp::cluster::Selector;
    std::vector<std::string> keys;
    for (int k = 0; k < 64; ++k) keys.push_back(std::string(1, 'k') + std::to_string(100 + k));
    const VectorSource source(keys);
    Selector sel({64, 64, 64}, 3, 8);
    SampleReply good = answer_samples(source, 1, sel.sample_request(1));
    CHECK(sel.check_samples(1, good));
    SampleReply r = good;
    r.per_split.pop_back();
    CHECK(sel.check_samples(1, r).message() == "sample reply for the wrong number of splits");
    r = good;
    r.per_split[0].push_back({"k999", 1, 64});
    CHECK(sel.check_samples(1, r).message() == "a sample outside its window");
    CHECK_THROWS_AS(sel.take_samples(1, r), std::invalid_argument);
    CHECK(sel.check_samples(0, good).message() == "a sample outside its window");  // node 1's
    CHECK_FALSE(sel.check_samples(3, good));
    for (uint32_t i = 0; i < 3; ++i)
        sel.take_samples(i, answer_samples(source, i, sel.sample_request(i)));
    sel.choose_pivots();
    REQUIRE_FALSE(sel.done());
    CountReply counts = answer_counts(source, 2, sel.count_request(2));
    CHECK(sel.check_counts(2, counts));
    CountReply c = counts;
    c.counts.emplace_back();
    CHECK(sel.check_counts(2, c).message() == "count reply for the wrong number of splits");
    c = counts;
    c.counts[0].push_back(1);
    CHECK(sel.check_counts(2, c).message() == "count reply for the wrong number of pivots");
    c = counts;
    REQUIRE_FALSE(c.counts[0].empty());
    c.counts[0][0] = 65;
    CHECK(sel.check_counts(2, c).message() == "a count outside its window");
    CHECK_THROWS_AS(sel.take_counts(2, c), std::invalid_argument);
}
