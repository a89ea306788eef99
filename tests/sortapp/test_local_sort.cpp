// End to end through the library: every distribution x both record formats x one pass and
// multi-run (with multi-pass merges), at sizes 0, 1, 2, a run boundary +-1 and a few MiB.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "helpers.hpp"
#include "sortapp/generator.hpp"
#include "sortapp/local_sort.hpp"
#include "sortapp/validator.hpp"

using namespace sortapp;
using sortapp_test::TempDir;

namespace {

SortOptions small_options(const RecordFormat &f, std::uint64_t budget, const std::string &scratch) {
    SortOptions o;
    o.format = f;
    o.memory_budget = budget;
    o.scratch_dir = scratch;
    o.io_size = 64u << 10;  // several requests per run even at these sizes
    o.io_depth = 4;
    o.merge_buffer = 256u << 10;
    o.min_merge_buffer = 128u << 10;
    return o;
}

// Sorts `records` generated records and checks the output every way there is.
void sort_and_check(const SortOptions &o, Distribution d, std::uint64_t records,
                    LocalSortResult &result) {
    TempDir dir;
    GeneratorSpec spec{o.format, d, records * 31 + 7};
    Checksum written;
    REQUIRE(generate_file(spec, dir / "in", 0, records, written));
    SortOptions opts = o;
    if (opts.scratch_dir.empty()) opts.scratch_dir = dir.path();
    Status s = local_sort(opts, dir / "in", dir / "out", DiskBandwidth{}, result);
    REQUIRE(s);
    Summary sum;
    REQUIRE(validate_file(o.format, dir / "out", sum));
    CHECK(sum.records == records);
    CHECK(sum.sorted());
    CHECK(sum.checksum == written);
    auto in = sortapp_test::read_file(dir / "in");
    auto out = sortapp_test::read_file(dir / "out");
    CHECK(sortapp_test::reference_sort(o.format, out) ==
          sortapp_test::reference_sort(o.format, in));
    // Nothing but the input and the output is left behind.
    CHECK(dir.entries() == std::vector<std::string>{"in", "out"});
}

}  // namespace

TEST_CASE("local sort: distributions x formats x one-pass/multi-run x sizes", "[local_sort]") {
    const RecordFormat formats[] = {{100, 10}, {80, 8}};
    for (const RecordFormat &f : formats) {
        // Multi-run at the minimum budget; the run size the plan picks gives the boundaries.
        SortOptions tight = small_options(f, minimum_memory_budget, "");
        MemoryPlan plan;
        REQUIRE(plan_memory(tight, 1u << 20, plan));
        REQUIRE_FALSE(plan.one_pass);
        const std::uint64_t run = plan.run_records;
        const std::uint64_t few_mib = (3u << 20) / f.record_size;
        SortOptions roomy = small_options(f, 64u << 20, "");
        for (Distribution d : all_distributions) {
            // Three runs do not fit one pass at this budget: 3 * run +- 1 are run boundaries of a
            // multi-run sort.
            for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, run - 1,
                                    run, run + 1, 3 * run - 1, 3 * run, 3 * run + 1, few_mib}) {
                for (bool multi : {false, true}) {
                    if (!multi && n > few_mib / 2 && n != few_mib) continue;
                    INFO(f.describe() << ", " << distribution_name(d) << ", " << n << " records, "
                                      << (multi ? "minimum budget" : "one pass"));
                    LocalSortResult r;
                    sort_and_check(multi ? tight : roomy, d, n, r);
                    CHECK(r.records == n);
                    if (!multi) CHECK(r.one_pass);
                    MemoryPlan expected;
                    REQUIRE(plan_memory(multi ? tight : roomy, n, expected));
                    CHECK(r.one_pass == expected.one_pass);
                    CHECK(r.kept_records == (expected.keep_last_run && n > 0 && !r.one_pass
                                                 ? expected.run_records
                                                 : 0));
                    if (multi && n >= 3 * run - 1) {
                        CHECK_FALSE(r.one_pass);
                        CHECK(r.runs == (n + run - 1) / run);
                        CHECK(r.phases.size() == 2);
                    }
                    if (multi && n == few_mib) CHECK(r.merge_passes >= 2);  // runs > fan-in
                }
            }
        }
    }
}

TEST_CASE("local sort: odd record format and buffered I/O", "[local_sort]") {
    SortOptions o = small_options(RecordFormat{37, 13}, minimum_memory_budget, "");
    o.direct_io = false;
    LocalSortResult r;
    sort_and_check(o, Distribution::few, 60000, r);
    CHECK_FALSE(r.one_pass);
    o.direct_io = true;  // falls back to buffered I/O: 37-byte runs cannot start on blocks
    sort_and_check(o, Distribution::uniform, 30001, r);
}

TEST_CASE("local sort: runs and temporaries go to the scratch directory", "[local_sort]") {
    TempDir scratch;
    SortOptions o = small_options(RecordFormat{100, 10}, minimum_memory_budget, scratch.path());
    LocalSortResult r;
    sort_and_check(o, Distribution::skewed, 20000, r);
    CHECK_FALSE(r.one_pass);
    CHECK(scratch.entries().empty());
    CHECK(r.phases.at(0).name == "phase 1");
    CHECK(r.phases.at(1).name == "phase 2");
    CHECK(r.phases.at(0).bytes == 2000000);
}

TEST_CASE("local sort: expectations come from the disk bandwidth", "[local_sort]") {
    TempDir dir;
    GeneratorSpec spec;
    Checksum c;
    REQUIRE(generate_file(spec, dir / "in", 0, 10000, c));
    SortOptions o = small_options(spec.format, 64u << 20, dir.path());
    DiskBandwidth disk;
    disk.read_mb_s = 100;
    disk.write_mb_s = 50;
    LocalSortResult r;
    REQUIRE(local_sort(o, dir / "in", dir / "out", disk, r));
    REQUIRE(r.phases.size() == 1);
    // 1 MB read at 100 MB/s and written at 50 MB/s.
    CHECK(r.phases[0].expected_seconds == Approx(0.01 + 0.02));
    CHECK(r.phases[0].ratio() > 0);
}

TEST_CASE("local sort: deep prefetch, runs shorter than the prefetch ring", "[local_sort]") {
    SortOptions o = small_options(RecordFormat{100, 10}, 4u << 20, "");
    MemoryPlan plan;
    REQUIRE(plan_memory(o, 1u << 20, plan));
    for (std::uint64_t n : {3 * plan.run_records + 1, 4 * plan.run_records - 5}) {
        INFO(n << " records");
        LocalSortResult r;
        sort_and_check(o, Distribution::uniform, n, r);
        CHECK_FALSE(r.one_pass);
        CHECK(r.merge.stream_depth == o.merge_depth);
        CHECK(r.merge_passes == 1);
    }
}

TEST_CASE("local sort: the last run merges from memory, equal keys in input order",
          "[local_sort]") {
    const RecordFormat f{100, 10};
    SortOptions o = small_options(f, 16u << 20, "");  // the others' merge unchanged beside it
    MemoryPlan plan;
    REQUIRE(plan_memory(o, 1u << 20, plan));
    const std::uint64_t run = plan.run_records;
    // A short last run in the input (formed first, so that the run kept is a full one), and none.
    for (std::uint64_t n : {3 * run + run / 2 + 1, 3 * run}) {
        INFO(n << " records, runs of " << run);
        REQUIRE(plan_memory(o, n, plan));
        REQUIRE(plan.keep_last_run);
        TempDir dir;
        GeneratorSpec spec{f, Distribution::few, n};  // many equal keys
        Checksum written;
        REQUIRE(generate_file(spec, dir / "in", 0, n, written));
        LocalSortResult r;
        SortOptions opts = o;
        opts.scratch_dir = dir.path();
        REQUIRE(local_sort(opts, dir / "in", dir / "out", DiskBandwidth{}, r));
        CHECK(r.runs == (n + run - 1) / run);
        CHECK(r.kept_records == run);
        CHECK(r.merge_passes == 1);
        // Equal keys leave in input order: the output is the input's stable sort by key.
        auto in = sortapp_test::read_file(dir / "in");
        std::vector<std::uint64_t> order(n);
        for (std::uint64_t i = 0; i < n; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
            return std::memcmp(&in[a * 100], &in[b * 100], 10) < 0;
        });
        std::vector<std::uint8_t> expected(in.size());
        for (std::uint64_t i = 0; i < n; ++i)
            std::memcpy(&expected[i * 100], &in[order[i] * 100], 100);
        auto out = sortapp_test::read_file(dir / "out");
        REQUIRE(out.size() == expected.size());
        const auto first_difference = std::mismatch(out.begin(), out.end(), expected.begin());
        CHECK((first_difference.first - out.begin()) / 100 == std::ptrdiff_t(n));  // no record
        CHECK(dir.entries() == std::vector<std::string>{"in", "out"});
    }
}
