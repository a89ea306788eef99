// Collectives checked against a serial computation at every job size from 1 to 9 (odd and
// even, powers of two and not) on shm ([collectives]); on a few sizes over tcp and in restricted
// mode, every type and reduction at the large size, and beside other threads' traffic
// ([collectives_more], [collective_threads]).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "matrix.hpp"

namespace {

// Sanitizer builds (VIADUCT_TEST_MATRIX=cover) run a covering subset of the job sizes.
std::vector<int> job_sizes() {
    const char *m = std::getenv("VIADUCT_TEST_MATRIX");
    if (m != nullptr && std::string(m) == "cover") return {1, 2, 3, 5, 8};
    return {1, 2, 3, 4, 5, 6, 7, 8, 9};
}

}  // namespace

TEST_CASE("every collective matches the serial result at 1 to 9 ranks (shm)", "[collectives]") {
    const int ranks = GENERATE(from_range(job_sizes()));
    const matrix::Combo combo{"shm", "", "", ""};
    INFO(combo.name() << ", " << ranks << " ranks");
    const auto spec = combo.job(ranks, 120, "collectives", {"all"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

// The shm transport, at fewer sizes: odd and even, a power of two and not.
TEST_CASE("every collective matches the serial result over the shm transport", "[collectives]") {
    const int ranks = GENERATE(2, 3, 5, 8);
    const matrix::Combo combo = matrix::shm_transport();
    INFO(combo.name() << ", " << ranks << " ranks");
    const auto spec = combo.job(ranks, 120, "collectives", {"all"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("every collective matches the serial result over tcp and in restricted mode",
          "[collectives_more]") {
    struct Case {
        matrix::Combo combo;
        int ranks;
    };
    const Case c = GENERATE(values<Case>({
        {{"tcp;ofi_rxm", "", "", ""}, 3},
        {{"tcp;ofi_rxm", "", "", ""}, 4},
        {{"tcp;ofi_rxm", "rdma", "1", ""}, 5},
        {{"shm", "sendrecv", "1", ""}, 3},
        {{"shm", "", "", "", "shm"}, 4},
    }));
    INFO(c.combo.name() << ", " << c.ranks << " ranks");
    const auto spec = c.combo.job(c.ranks, 120, "collectives", {"all"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("every type and reduction at 1 MiB + 3 elements (shm)", "[collectives_more]") {
    const int ranks = GENERATE(3, 4);
    const matrix::Combo combo{"shm", "", "", ""};
    INFO(combo.name() << ", " << ranks << " ranks");
    const auto spec = combo.job(ranks, 120, "collectives", {"large"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}

TEST_CASE("collectives beside point-to-point traffic from other threads", "[collective_threads]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::providers()));
    INFO(combo.name());
    const auto spec = combo.job(3, 120, "collective_threads", {"20"});
    matrix::expect_pass(launcher::run_job(spec), spec);
}
