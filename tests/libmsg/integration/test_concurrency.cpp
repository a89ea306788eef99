// Concurrency: hundreds of operations in flight per rank (also with the receive buffers shared
// by more peers than the pool serves at once), and eight threads per process sharing one CQ,
// over every provider x protocol x mode.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("hundreds of outstanding operations to many peers all complete once", "[outstanding]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    // 8 ranks, 24 sends and 24 receives per peer: 336 operations in flight per rank.
    const auto spec = combo.job(8, 120, "outstanding", {"24"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("a job larger than its active peers shares its receive buffers and loses nothing",
          "[receive_pool]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    INFO(combo.name());
    // 8 ranks, 7 peers each, a pool for 2 of them at once: the worker checks every message,
    // that the buffers allocated are msg_receive_memory's, and that the pool granted credit.
    auto spec = combo.job(8, 120, "outstanding", {"24"});
    spec.env.emplace_back("VIADUCT_ACTIVE_PEERS", "2");
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("eight threads per process send, receive and wait on one CQ", "[threads]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    const auto spec = combo.job(3, 120, "threads", {"8", "16"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}
