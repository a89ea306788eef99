// The key-prefix radix sort and the loser tree, against plain reference sorts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "sortapp/generator.hpp"
#include "sortapp/key_sort.hpp"
#include "sortapp/loser_tree.hpp"

using namespace sortapp;

namespace {

// The order the sort must produce: key bytes, then index.
std::vector<std::uint64_t> reference_order(const RecordFormat &f,
                                           const std::vector<std::uint8_t> &recs) {
    std::size_t n = recs.size() / f.record_size;
    std::vector<std::uint64_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::uint64_t a, std::uint64_t b) {
        return std::memcmp(&recs[a * f.record_size], &recs[b * f.record_size], f.key_size) < 0;
    });
    return idx;
}

std::vector<std::uint64_t> sorted_order(const RecordFormat &f,
                                        const std::vector<std::uint8_t> &recs, unsigned threads) {
    std::size_t n = recs.size() / f.record_size;
    std::vector<SortEntry> e(n), scratch(n);
    make_entries(f, recs.data(), n, e.data(), threads);
    sort_entries(f, recs.data(), e.data(), scratch.data(), n, threads);
    std::vector<std::uint64_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = entry_index(e[i]);
    return idx;
}

}  // namespace

TEST_CASE("key-prefix sort orders like a comparison sort, every distribution and format",
          "[key_sort]") {
    // 100/10 and 80/8 as required; 24/4 (short key), 64/16 (ties on the first 10 bytes fall back
    // to the full key) and 37/13 (odd sizes).
    const RecordFormat formats[] = {{100, 10}, {80, 8}, {24, 4}, {64, 16}, {37, 13}};
    const std::size_t sizes[] = {0, 1, 2, 3, 65, 1000, 40000};
    for (const RecordFormat &f : formats) {
        for (Distribution d : all_distributions) {
            for (std::size_t n : sizes) {
                for (unsigned threads : {1u, 2u}) {
                    GeneratorSpec spec{f, d, n + threads};
                    std::vector<std::uint8_t> recs(n * f.record_size);
                    generate_records(spec, 0, n, recs.data());
                    INFO(f.describe() << ", " << distribution_name(d) << ", " << n << " records, "
                                      << threads << " threads");
                    CHECK(sorted_order(f, recs, threads) == reference_order(f, recs));
                }
            }
        }
    }
}

TEST_CASE("key-prefix sort: keys that tie on 10 bytes differ later", "[key_sort]") {
    RecordFormat f{40, 20};
    std::mt19937_64 rng(5);
    const std::size_t n = 50000;
    std::vector<std::uint8_t> recs(n * 40, 0);
    for (std::size_t i = 0; i < n; ++i) {
        recs[i * 40] = std::uint8_t(rng() % 3);       // few distinct first bytes
        recs[i * 40 + 15] = std::uint8_t(rng() % 4);  // differences past the 10-byte prefix
        recs[i * 40 + 19] = std::uint8_t(rng() % 256);
    }
    CHECK(sorted_order(f, recs, 2) == reference_order(f, recs));
}

TEST_CASE("loser tree merges sorted sources, empty ones included", "[loser_tree]") {
    std::mt19937 rng(11);
    for (std::size_t k = 1; k <= 9; ++k) {
        std::vector<std::vector<int>> src(k);
        std::vector<int> all;
        for (std::size_t s = 0; s < k; ++s) {
            std::size_t len = s == 1 ? 0 : rng() % 50;
            for (std::size_t j = 0; j < len; ++j) src[s].push_back(int(rng() % 20));
            std::sort(src[s].begin(), src[s].end());
            all.insert(all.end(), src[s].begin(), src[s].end());
        }
        std::sort(all.begin(), all.end());
        std::vector<std::size_t> pos(k, 0);
        auto less = [&](std::size_t a, std::size_t b) { return src[a][pos[a]] < src[b][pos[b]]; };
        auto done = [&](std::size_t a) { return pos[a] >= src[a].size(); };
        LoserTree tree(k, less, done);
        std::vector<int> merged;
        for (std::size_t w; (w = tree.winner()) < k;) {
            merged.push_back(src[w][pos[w]++]);
            tree.replay();
        }
        INFO("k = " << k);
        CHECK(merged == all);
    }
}
