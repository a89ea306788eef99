// libremoteio's multi-process tests: each case runs one worker scenario on every rank through
// msgrun, over the providers (and, for the round trips, both long-message protocols and
// restricted mode).
#include <algorithm>
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

}  // namespace

TEST_CASE("request/reply round trips, 0 B to 64 MiB, to worker and shadow thread, self included",
          "[roundtrip]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    // The 64 MiB case once per provider and protocol; smaller elsewhere to keep the suite short.
    // Sanitizer builds move fewer bytes (a long message all the same).
    const bool big = combo.restricted == "0";
    const int big_mib = std::max(8, 64 / launcher::slowdown());
    run(combo, 3, 120, "roundtrip", {std::to_string(big ? big_mib : 4)});
}

TEST_CASE("the shadow thread serves remote I/O while the worker holds IPC requests",
          "[ipc_and_io]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    // Both file I/O back ends: io_uring (where the kernel allows it) and the thread fallback.
    const std::string file_io = GENERATE(as<std::string>{}, "", "threads");
    INFO(combo.name() << " VIADUCT_RIO_FILE_IO=" << file_io);
    auto spec = combo.job(3, 120, "ipc_and_io", {"64"});
    if (!file_io.empty()) spec.env.emplace_back("VIADUCT_RIO_FILE_IO", file_io);
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("1,000 outstanding requests complete once each", "[outstanding]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    run(combo, 2, 120, "outstanding", {"1000"});
    run(combo, 3, 120, "outstanding", {"1000"});
}

TEST_CASE("out-of-range, unknown-handle, read-only, short-file and malformed requests are refused",
          "[violations]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    run(combo, 2, 120, "violations");
}

// A rank killed while serving: over tcp. libfabric 1.17's shm can wedge survivors of a rank
// killed mid-transfer (docs/libmsg.md, "Known limits"), which is libmsg's to report.
TEST_CASE("requests to a killed rank complete with MSG_ERR_PEER_FAILED in bounded time",
          "[killed_peer]") {
    const matrix::Combo combo =
        GENERATE(filter([](const matrix::Combo &c) { return c.provider != "shm"; },
                        from_range(matrix::with_protocols())));
    INFO(combo.name());
    auto spec = combo.job(3, 90, "killed_peer");
    // Joining under a sanitizer on a loaded machine takes longer than 3 s.
    spec.env.emplace_back("VIADUCT_TIMEOUT_MS", std::to_string(3000 * launcher::slowdown()));
    const auto result = launcher::run_job(spec);
    const size_t ok = result.lines_with("SURVIVOR_OK").size();
    const size_t passes = result.lines_with("PASS killed_peer").size();
    INFO("status " << result.status << ", " << ok << " survivors OK, " << passes
                   << " passed; output:\n"
                   << result.tail());
    CHECK((!result.killed_by_driver && result.status == 128 + 9 && ok == 2 && passes == 2 &&
           result.lines_with("FAIL").empty()));
}

TEST_CASE("finalize under load lets every outstanding request finish", "[shutdown_load]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    run(combo, 3, 120, "shutdown_load", {"200"});
}

TEST_CASE("8 threads per rank issue blocking requests while the worker serves", "[threads]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    run(combo, 3, 180, "threads", {"8", "60"});
}

TEST_CASE("export handles are random: two are not neighbours, and guesses are refused",
          "[handles]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    run(combo, 2, 120, "handles");
}

TEST_CASE(
    "request headers whose data never comes hold at most the per-peer bound, and "
    "finalize returns",
    "[withheld_data]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    run(combo, 2, 180, "withheld_data");
}

TEST_CASE("finalize gives up on a rank that does not come, with RIO_ERR_TIMEOUT",
          "[finalize_stuck]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    run(combo, 2, 120, "finalize_stuck");
}
