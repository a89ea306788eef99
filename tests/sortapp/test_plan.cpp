// The memory budget: defaults from /proc/meminfo and cgroups, and how a budget is split.
#include <catch2/catch.hpp>

#include "sortapp/key_sort.hpp"
#include "sortapp/memory_budget.hpp"
#include "sortapp/sort_options.hpp"

using namespace sortapp;

TEST_CASE("memory figures are parsed from meminfo and cgroup files", "[plan]") {
    CHECK(meminfo_available("MemTotal: 100 kB\nMemFree: 50 kB\nMemAvailable:   2048 kB\n") ==
          2048u * 1024);
    CHECK(meminfo_available("MemTotal: 100 kB\n") == 0);
    CHECK(cgroup_headroom("max\n", "123\n") == UINT64_MAX);
    CHECK(cgroup_headroom("1000\n", "300\n") == 700);
    CHECK(cgroup_headroom("1000\n", "3000\n") == 0);
    CHECK(cgroup_headroom("9223372036854771712\n", "5\n") == UINT64_MAX);  // cgroup v1 "unlimited"
    CHECK(cgroup_headroom("", "") == UINT64_MAX);
    MemoryFigures f = default_memory_budget();
    CHECK(f.available > 0);
    CHECK(f.budget < f.available);
}

TEST_CASE("memory plan: one pass when everything fits, else two run buffers", "[plan]") {
    SortOptions o;
    o.memory_budget = 64u << 20;
    MemoryPlan p;
    REQUIRE(plan_memory(o, 100000, p));  // 10 MB of records
    CHECK(p.one_pass);
    CHECK(p.phase1_bytes <= o.memory_budget);
    REQUIRE(plan_memory(o, 1000000, p));  // 100 MB
    CHECK_FALSE(p.one_pass);
    CHECK(p.run_records % records_per_io_unit(o.format) == 0);
    CHECK(p.phase1_bytes <= o.memory_budget);
    CHECK(p.run_records * 100 * 2 > o.memory_budget / 2);  // most of memory holds records
    CHECK(records_per_io_unit(RecordFormat{100, 10}) * 100 % 4096 == 0);
    CHECK(records_per_io_unit(RecordFormat{80, 8}) * 80 % 4096 == 0);
}

TEST_CASE("memory budget below the minimum is refused and says the minimum", "[plan]") {
    SortOptions o;
    o.memory_budget = 100000;
    MemoryPlan p;
    Status s = plan_memory(o, 10, p);
    REQUIRE_FALSE(s);
    CHECK(s.message().find("below the minimum of") != std::string::npos);
    o.memory_budget = minimum_memory_budget;
    CHECK(plan_memory(o, 10, p));
}

TEST_CASE("merge plan: one pass with big buffers, more passes when runs are many", "[plan]") {
    SortOptions o;
    o.memory_budget = 64u << 20;
    MemoryPlan m;
    REQUIRE(plan_memory(o, 10000000, m));
    MergePlan few = plan_merge(o, m, 10);
    CHECK(few.passes == 1);
    CHECK(few.fan_in == 10);
    CHECK(few.stream_buffer >= o.merge_buffer - 102400);
    CHECK(few.stream_depth == o.merge_depth);  // room for deep prefetch
    MergePlan many = plan_merge(o, m, 2000);
    CHECK(many.passes >= 2);
    CHECK(many.fan_in >= 2);
    CHECK(many.stream_depth >= 2);
    CHECK(many.stream_depth * many.fan_in * many.stream_buffer + m.write_buffer * m.write_buffers <=
          o.memory_budget);
    o.memory_budget = minimum_memory_budget;
    REQUIRE(plan_memory(o, 100000, m));
    MergePlan tight = plan_merge(o, m, 40);
    CHECK(tight.fan_in >= 2);
    CHECK(tight.passes >= 2);
}

TEST_CASE("memory plan: the last run stays in memory where a one-pass merge fits beside it",
          "[plan]") {
    SortOptions o;
    o.memory_budget = 64u << 20;
    MemoryPlan m;
    REQUIRE(plan_memory(o, 1000000, m));  // 100 MB: a few runs
    REQUIRE_FALSE(m.one_pass);
    CHECK(m.keep_last_run);
    // The kept run's records and sorted entries, beside the merge's buffers and the writers.
    CHECK(m.kept_bytes >= m.run_records * (100 + sizeof(SortEntry)));
    const std::size_t runs = std::size_t((1000000 + m.run_records - 1) / m.run_records);
    MergePlan p = plan_merge(o, m, runs);
    CHECK(p.passes == 1);
    CHECK(p.stream_depth == o.merge_depth);  // the others' merge as deep as without it
    CHECK(p.fan_in * p.stream_depth * p.stream_buffer + m.write_buffer * m.write_buffers +
              m.kept_bytes <=
          o.memory_budget);
    // Where the merge's buffers would shrink with the run kept, every run is written.
    REQUIRE(plan_memory(o, 10000000, m));  // 1 GB: many runs
    CHECK_FALSE(m.keep_last_run);
    // So too where it would need more passes.
    o.memory_budget = minimum_memory_budget;
    REQUIRE(plan_memory(o, 100000, m));
    CHECK_FALSE(m.keep_last_run);
    CHECK(m.kept_bytes == 0);
}
