// Matching: wildcards, FIFO order per (peer, tag) and truncation, over every provider x protocol
// x mode.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("wildcard receives match and report the real source and tag", "[wildcard]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    const auto spec = combo.job(4, 90, "wildcard");
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("messages on one (peer, tag) are matched in the order sent", "[fifo]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    // 150 messages per (sender, tag) of mixed eager and long sizes, two senders, two tags.
    const auto spec = combo.job(3, 120, "fifo", {"150"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("a too-small receive buffer yields MSG_ERR_TRUNCATED and nothing more", "[truncation]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    const auto spec = combo.job(2, 90, "truncation");
    matrix::expect_pass(launcher::run_job(spec), spec);
}
