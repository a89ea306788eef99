// The river sort's partitioning against brute force: samples spread over the nodes in
// proportion to their records, splitters at even ranks of the global order, and a partitioner
// that sends every record to the one partition whose range holds (key, node, position).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "splitters.hpp"

namespace cl = sortapp::cluster;

namespace {

// Node n's records: keys drawn from `alphabet` letters (few letters: many equal keys).
std::vector<std::vector<std::string>> make_inputs(const std::vector<uint64_t> &sizes, int alphabet,
                                                  uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::vector<std::vector<std::string>> in(sizes.size());
    for (size_t n = 0; n < sizes.size(); ++n)
        for (uint64_t i = 0; i < sizes[n]; ++i) {
            std::string k(4, 'a');
            for (char &c : k) c = static_cast<char>('a' + gen() % alphabet);
            in[n].push_back(k);
        }
    return in;
}

// Partition sizes when every record goes where the partitioner says.
std::vector<uint64_t> partition(const std::vector<std::vector<std::string>> &in,
                                const std::vector<cl::Element> &splitters) {
    std::vector<uint64_t> parts(splitters.size() + 1, 0);
    for (size_t n = 0; n < in.size(); ++n) {
        cl::Partitioner p(splitters, 4, static_cast<uint32_t>(n));
        for (uint64_t i = 0; i < in[n].size(); ++i) {
            int k = p.pick(reinterpret_cast<const uint8_t *>(in[n][i].data()), i);
            // Brute force: the partition is the number of splitters at or below the record.
            cl::Element e{in[n][i], static_cast<uint32_t>(n), i};
            int want = 0;
            for (const cl::Element &s : splitters) want += cl::compare(s, e) <= 0;
            REQUIRE(k == want);
            ++parts[static_cast<size_t>(k)];
        }
    }
    return parts;
}

std::vector<cl::Element> sample(const std::vector<std::vector<std::string>> &in, uint64_t wanted,
                                uint64_t seed) {
    std::vector<uint64_t> sizes;
    for (const auto &v : in) sizes.push_back(v.size());
    std::vector<uint64_t> per = cl::samples_per_node(sizes, wanted);
    std::vector<cl::Element> all;
    for (size_t n = 0; n < in.size(); ++n)
        for (uint64_t pos : cl::sample_positions(sizes[n], per[n], seed + n))
            all.push_back({in[n][pos], static_cast<uint32_t>(n), pos});
    return all;
}

}  // namespace

TEST_CASE("samples are spread in proportion to the nodes' records", "[splitters]") {
    CHECK(cl::samples_per_node({100, 0, 300}, 40) == std::vector<uint64_t>{10, 0, 30});
    CHECK(cl::samples_per_node({5, 5}, 100) == std::vector<uint64_t>{5, 5});
    CHECK(cl::samples_per_node({0, 0}, 100) == std::vector<uint64_t>{0, 0});
    auto per = cl::samples_per_node({7, 11, 13}, 10);
    CHECK(per[0] + per[1] + per[2] == 10);
    CHECK(cl::samples_wanted(1, 1000000) == 0);
    CHECK(cl::samples_wanted(4, 1000) == 1000);
    CHECK(cl::samples_wanted(4, 1u << 30) == 30000);
    auto pos = cl::sample_positions(1000, 100, 7);
    CHECK(pos.size() == 100);
    CHECK(std::is_sorted(pos.begin(), pos.end()));
    CHECK(std::adjacent_find(pos.begin(), pos.end()) == pos.end());
    CHECK(pos.back() < 1000);
    CHECK(cl::sample_positions(3, 10, 7) == std::vector<uint64_t>{0, 1, 2});
}

TEST_CASE("with every record sampled the partitions are exact, whatever the keys", "[splitters]") {
    for (int alphabet : {26, 2, 1}) {
        auto in = make_inputs({500, 0, 333, 7}, alphabet, 3);
        auto splitters = cl::choose_splitters(sample(in, 1u << 20, 9), 4);
        REQUIRE(cl::check_splitters(splitters, 4, 4));
        auto parts = partition(in, splitters);
        CHECK(*std::max_element(parts.begin(), parts.end()) -
                  *std::min_element(parts.begin(), parts.end()) <=
              1);
    }
}

TEST_CASE("sampled splitters keep partitions within the bound, equal keys included",
          "[splitters]") {
    for (int alphabet : {26, 3, 1}) {
        auto in = make_inputs({40000, 25000, 0, 15000}, alphabet, 11);
        auto splitters = cl::choose_splitters(sample(in, cl::samples_wanted(4, 80000), 5), 4);
        auto parts = partition(in, splitters);
        for (uint64_t p : parts) CHECK(p <= 1.05 * 80000 / 4);
    }
}

TEST_CASE("splitters from another process are checked", "[splitters]") {
    std::vector<cl::Element> s = {{"aaaa", 0, 1}, {"bbbb", 1, 0}};
    CHECK(cl::check_splitters(s, 3, 4));
    CHECK_FALSE(cl::check_splitters(s, 4, 4));
    CHECK_FALSE(cl::check_splitters(s, 3, 5));
    std::swap(s[0], s[1]);
    CHECK_FALSE(cl::check_splitters(s, 3, 4));
    CHECK(cl::choose_splitters({}, 3).size() == 2);
}
