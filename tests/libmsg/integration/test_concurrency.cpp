// Concurrency: hundreds of operations in flight per rank, and eight threads per process sharing
// one CQ, over every provider x protocol x mode.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("hundreds of outstanding operations to many peers all complete once", "[outstanding]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    // 8 ranks, 24 sends and 24 receives per peer: 336 operations in flight per rank.
    const auto spec = combo.job(8, 120, "outstanding", {"24"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("eight threads per process send, receive and wait on one CQ", "[threads]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    const auto spec = combo.job(3, 120, "threads", {"8", "16"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}
