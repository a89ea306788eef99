// A thread blocked in msg_cq_wait for 5 s with a live peer uses under 2% of a core, counting
// every thread of the process.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("waiting on an idle CQ does not burn CPU", "[idle_cpu]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    INFO(combo.name());
    const auto spec = combo.job(2, 60, "idle_cpu", {"5", "2.0"});
    const auto result = launcher::run_job(spec);
    matrix::expect_pass(result, spec);
    for (const auto &line : result.lines_with("idle_cpu:")) WARN(combo.name() << ": " << line);
}
