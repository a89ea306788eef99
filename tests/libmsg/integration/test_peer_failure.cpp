// A rank that is killed or exits mid-job: survivors see MSG_ERR_PEER_FAILED in bounded time and
// finish cleanly, and msgrun's status is the dead rank's.
#include <catch2/catch.hpp>
#include <string>

#include "matrix.hpp"

namespace {

// Short enough to keep the suite quick, long enough for a loaded 2-core machine; stretched by
// the build's slowdown, so a sanitizer's slow but live peer is not taken for a dead one.
std::string timeout_ms() {
    return std::to_string(3000 * launcher::slowdown());
}

void expect_survivors(const launcher::JobResult &result, const launcher::JobSpec &spec,
                      int dead_status) {
    // Every rank but the last survived, and said so.
    const size_t survivors = static_cast<size_t>(spec.ranks - 1);
    const size_t ok = result.lines_with("SURVIVOR_OK").size();
    const size_t passes = result.lines_with("PASS peer_failure").size();
    const size_t failures = result.lines_with("FAIL").size();
    INFO("status " << result.status << " (want " << dead_status << "), " << ok << " of "
                   << survivors << " survivors OK, " << passes << " passed, " << failures
                   << " FAIL lines" << (result.killed_by_driver ? ", killed by the driver" : "")
                   << ", " << result.seconds << " s; output:\n"
                   << result.tail());
    CHECK((!result.killed_by_driver && result.status == dead_status && failures == 0 &&
           ok == survivors && passes == survivors));
    for (const auto &line : result.lines_with("SURVIVOR detected")) WARN(line);
}

}  // namespace

TEST_CASE("survivors of a killed rank see MSG_ERR_PEER_FAILED and exit cleanly", "[peer_failure]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    INFO(combo.name() << " VIADUCT_TIMEOUT_MS=" << timeout_ms());
    auto spec = combo.job(3, 60, "peer_failure", {"kill"});
    spec.env.emplace_back("VIADUCT_TIMEOUT_MS", timeout_ms());
    expect_survivors(launcher::run_job(spec), spec, 128 + 9);
}

TEST_CASE("survivors of a rank that exits without finalize see MSG_ERR_PEER_FAILED",
          "[peer_failure]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    INFO(combo.name() << " VIADUCT_TIMEOUT_MS=" << timeout_ms());
    auto spec = combo.job(3, 60, "peer_failure", {"exit"});
    spec.env.emplace_back("VIADUCT_TIMEOUT_MS", timeout_ms());
    expect_survivors(launcher::run_job(spec), spec, 3);
}

// Harder than the cases above: the rank dies while it is moving data with both survivors, so
// it may die holding transport state (locks, queue slots) that the survivors share. Over tcp
// nothing is shared and the survivors carry on. Over libfabric 1.17's shm they may not: its
// spin locks live in the ranks' shared regions, and a rank killed holding one wedges whoever
// touches that region next (docs/libmsg.md, "Known limits"), so shm is not claimed here.
TEST_CASE("survivors of a rank killed while receiving large transfers carry on (tcp)",
          "[peer_failure_busy]") {
    const matrix::Combo combo =
        GENERATE(filter([](const matrix::Combo &c) { return c.provider != "shm"; },
                        from_range(matrix::with_protocols())));
    INFO(combo.name() << " VIADUCT_TIMEOUT_MS=" << timeout_ms());
    auto spec = combo.job(3, 60, "peer_failure", {"kill_busy"});
    spec.env.emplace_back("VIADUCT_TIMEOUT_MS", timeout_ms());
    expect_survivors(launcher::run_job(spec), spec, 128 + 9);
}
