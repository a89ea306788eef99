// Payload integrity between two ranks, over every provider x protocol x mode, plus one 1 GiB
// message over shm.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>

#include "matrix.hpp"

namespace {

// A fresh seed each run widens coverage; VIADUCT_TEST_SEED replays a failure.
std::string payload_seed() {
    static const std::string seed = [] {
        const char *v = std::getenv("VIADUCT_TEST_SEED");
        return std::string(v != nullptr ? v : std::to_string(std::random_device{}() % 1000000));
    }();
    return seed;
}

}  // namespace

TEST_CASE("payloads of every size class arrive intact both ways", "[payload]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::full()));
    INFO(combo.name() << " VIADUCT_TEST_SEED=" << payload_seed());
    // 40 random sizes (fewer under sanitizers: the worker scales them) and one 64 MiB message
    // each way (smaller under sanitizers, a long message all the same).
    const int big_mib = std::max(8, 64 / launcher::slowdown());
    const auto spec = combo.job(2, 120, "payload", {payload_seed(), "40", std::to_string(big_mib)});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("a 1 GiB message arrives intact over shm", "[payload_huge]") {
    const matrix::Combo combo{"shm", "", "", ""};
    INFO(combo.name());
    const auto spec = combo.job(2, 300, "payload_huge", {"1024"});
    const auto result = launcher::run_job(spec);
    matrix::expect_pass(result, spec);
    for (const auto &line : result.lines_with("payload_huge: received")) WARN(line);
}

TEST_CASE("buffers unmapped, discarded or reallocated between long messages move their new bytes",
          "[registration]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    INFO(combo.name());
    // These providers keep no registrations of libmsg's (EXPECT_REUSE 0); the native verbs
    // transport's are checked in the Soft-RoCE suite.
    const auto spec = combo.job(2, 120, "registration", {"2", "4", "0"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}
