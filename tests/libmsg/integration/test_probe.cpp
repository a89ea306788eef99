// Probing: msg_probe / msg_iprobe over every provider x protocol x mode, for eager and long
// messages.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("probes report the first matching unexpected message without taking it", "[probe]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name());
    const auto spec = combo.job(2, 90, "probe");
    matrix::expect_pass(launcher::run_job(spec), spec);
}
