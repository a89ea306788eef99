// Argument errors that need a second rank: busy CQs, unknown ranks, extreme tags; a job whose
// receive buffers a rank may not have.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("busy CQ, unknown ranks and extreme tags in a two-rank job", "[api_errors]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    INFO(combo.name());
    const auto spec = combo.job(2, 60, "api_errors");
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("a job whose receive buffers a rank may not have is refused at once, saying why",
          "[receive_memory]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    INFO(combo.name());
    const auto spec = combo.job(2, 60, "receive_memory");
    matrix::expect_pass(launcher::run_job(spec), spec);
}
