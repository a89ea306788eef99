// Argument errors that need a second rank: busy CQs, unknown ranks, extreme tags.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("busy CQ, unknown ranks and extreme tags in a two-rank job", "[api_errors]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    INFO(combo.name());
    const auto spec = combo.job(2, 60, "api_errors");
    matrix::expect_pass(launcher::run_job(spec), spec);
}
