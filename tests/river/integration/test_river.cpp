// river's multi-process tests: each case runs one worker scenario on every rank through msgrun,
// over the providers, the long-message protocols and restricted mode.
#include <catch2/catch.hpp>
#include <string>

#include "matrix.hpp"

namespace {

void run(const matrix::Combo &combo, int ranks, int timeout, const std::string &scenario,
         std::vector<std::string> args = {}) {
    INFO(combo.name());
    auto spec = combo.job(ranks, timeout, scenario, std::move(args));
    matrix::expect_pass(launcher::run_job(spec), spec);
}

// Each provider, restricted and not.
std::vector<matrix::Combo> modes() {
    std::vector<matrix::Combo> all;
    for (const char *provider : {"shm", "tcp;ofi_rxm"})
        for (const char *restricted : {"0", "1"}) all.push_back({provider, "", restricted, ""});
    return all;
}

}  // namespace

TEST_CASE(
    "4 ranks, each a source and a sink, range-partitioned: every record arrives once, in "
    "order, at its sink",
    "[flow_all]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    // 100-byte records in batches of 16,300 bytes: long messages.
    run(combo, 4, 180, "flow", {"all", "range", "100", "16384", "20000"});
}

TEST_CASE("2 sources to 2 other sinks, hash-partitioned, batches sent eagerly", "[flow_split]") {
    const matrix::Combo combo = GENERATE(from_range(modes()));
    // 40-byte records in batches of 2,000 bytes: below the eager limit.
    run(combo, 4, 180, "flow", {"split", "hash", "40", "2000", "20000"});
}

TEST_CASE("3 ranks, overlapping sources and sinks, the application's own pick function",
          "[flow_overlap]") {
    const matrix::Combo combo = GENERATE(from_range(modes()));
    run(combo, 3, 180, "flow", {"overlap", "own", "64", "65536", "30000"});
}

TEST_CASE("3 ranks, one source, one sink and a rank that is neither", "[flow_pair]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    run(combo, 3, 120, "flow", {"pair", "hash", "32", "4096", "20000"});
}

TEST_CASE("a slow sink holds its sources within their credits and their memory bound",
          "[slow_sink]") {
    const matrix::Combo combo = GENERATE(from_range(modes()));
    run(combo, 3, 180, "slow_sink");
}

TEST_CASE("malformed batches and control messages from a rogue source are rejected by name",
          "[rogue_source]") {
    const matrix::Combo combo = GENERATE(from_range(modes()));
    run(combo, 2, 240, "rogue_source");
}

TEST_CASE("bad control messages from a rogue sink are rejected by name", "[rogue_sink]") {
    const matrix::Combo combo = GENERATE(from_range(modes()));
    run(combo, 2, 180, "rogue_sink");
}

namespace {

// A rank killed mid-flow: the job ends with msgrun reporting the kill (128 + SIGKILL) and
// every survivor having seen its named error and closed the river.
void killed(const matrix::Combo &combo, const std::string &scenario) {
    INFO(combo.name());
    auto spec = combo.job(4, 120, scenario);
    spec.env.emplace_back("VIADUCT_TIMEOUT_MS", std::to_string(3000 * launcher::slowdown()));
    const auto result = launcher::run_job(spec);
    const size_t ok = result.lines_with("SURVIVOR_OK").size();
    const size_t passes = result.lines_with("PASS " + scenario).size();
    INFO("status " << result.status << ", " << ok << " survivors OK, " << passes
                   << " passed; output:\n"
                   << result.tail());
    CHECK((!result.killed_by_driver && result.status == 128 + 9 && ok == 3 && passes == 3 &&
           result.lines_with("FAIL").empty()));
}

}  // namespace

TEST_CASE(
    "a sink killed mid-flow: its sources get MSG_ERR_PEER_FAILED, the other sink "
    "RIVER_ERR_SOURCE_ABORTED, in bounded time",
    "[killed_sink]") {
    killed(GENERATE(from_range(modes())), "killed_sink");
}

TEST_CASE(
    "a source killed mid-flow: its sinks get MSG_ERR_PEER_FAILED, the other source "
    "RIVER_ERR_SINK_CLOSED, in bounded time",
    "[killed_source]") {
    killed(GENERATE(from_range(modes())), "killed_source");
}
