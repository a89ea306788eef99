// In-core sort rate: sortapp's key-prefix radix sort against std::sort of the same
// (key prefix, index) pairs, on records made by sortgen's generator. Prints records/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "sortapp/generator.hpp"
#include "sortapp/key_sort.hpp"
#include "viaduct/clock.hpp"
#include "viaduct/fatal.hpp"

using namespace sortapp;

using viaduct::seconds_since;

int main(int argc, char **argv) {
    viaduct::install_fatal_handler("incore-sort");
    std::uint64_t n = argc > 1 ? std::stoull(argv[1]) : 10'000'000;
    std::string dist = argc > 2 ? argv[2] : "uniform";
    GeneratorSpec spec;
    if (!parse_distribution(dist, spec.distribution)) {
        std::fprintf(stderr, "usage: incore_sort [RECORDS] [DISTRIBUTION]\n");
        return 2;
    }
    const std::size_t rs = spec.format.record_size;
    std::vector<std::uint8_t> records(n * rs);
    generate_records(spec, 0, n, records.data());
    std::vector<SortEntry> entries(n), scratch(n), reference(n);
    make_entries(spec.format, records.data(), n, reference.data(), 2);

    for (unsigned threads : {1u, 2u}) {
        entries = reference;
        auto t0 = std::chrono::steady_clock::now();
        sort_entries(spec.format, records.data(), entries.data(), scratch.data(), n, threads);
        double s = seconds_since(t0);
        std::printf("radix key-prefix sort, %u thread%s: %.3f s, %.1f M records/s\n", threads,
                    threads == 1 ? "" : "s", s, n / s / 1e6);
    }
    std::vector<SortEntry> by_radix = entries;
    entries = reference;
    auto t0 = std::chrono::steady_clock::now();
    std::sort(entries.begin(), entries.end(), [](const SortEntry &a, const SortEntry &b) {
        return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
    });
    double s = seconds_since(t0);
    std::printf("std::sort of the same pairs, 1 thread: %.3f s, %.1f M records/s\n", s,
                n / s / 1e6);
    bool same = std::equal(
        entries.begin(), entries.end(), by_radix.begin(),
        [](const SortEntry &a, const SortEntry &b) { return a.hi == b.hi && a.lo == b.lo; });
    std::printf("results identical: %s\n", same ? "yes" : "NO");
    return same ? 0 : 1;
}
