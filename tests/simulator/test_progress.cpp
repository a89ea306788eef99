// A sweep's progress line: the pace reads in runs per second, or in seconds per run when runs
// are slow, never as "0 runs/s".
#include <catch2/catch.hpp>

#include "app/sweep_progress.hpp"

using namespace sansim;

TEST_CASE("a sweep's pace is never shown as 0 runs/s", "[progress]") {
    CHECK(sweep_pace(0, 12, 1.5) == "0/12 runs");  // no run done yet: no pace to tell
    CHECK(sweep_pace(1, 12, 2.4) == "1/12 runs, 2.40 s per run");
    CHECK(sweep_pace(3, 12, 30) == "3/12 runs, 10.00 s per run");
    CHECK(sweep_pace(30, 120, 2) == "30/120 runs, 15.0 runs/s");
    CHECK(sweep_pace(3, 4, 2.9) == "3/4 runs, 1.0 runs/s");
}
