// Sixteen local ranks connect in msg_init, report a positive connect time and reach each other.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("16 local ranks connect and report connect_seconds", "[connect]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    INFO(combo.name());
    const auto spec = combo.job(16, 120, "connect");
    const auto result = launcher::run_job(spec);
    matrix::expect_pass(result, spec);
    // Reported, never judged: speed is for the benchmarks.
    for (const auto &line : result.lines_with("connect_seconds="))
        WARN(combo.name() << ": " << line);
}
