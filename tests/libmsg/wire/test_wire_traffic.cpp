// Driver for the multi-process wire check: over shm and tcp;ofi_rxm (whose packets' senders come
// from FI_SOURCE), every protocol, with a small unexpected-message bound so floods are held back.
#include <catch2/catch.hpp>

#include "../integration/matrix.hpp"

TEST_CASE("floods held to a small unexpected bound arrive intact, in order, none refused",
          "[wire_traffic]") {
    const matrix::Combo combo = GENERATE(from_range(matrix::with_protocols()));
    INFO(combo.name());
    auto spec = combo.job(3, 180, "flood", {"200"});
    spec.env.emplace_back("VIADUCT_UNEXPECTED_COUNT", "3");
    spec.env.emplace_back("VIADUCT_UNEXPECTED_BYTES", "20000");
    matrix::expect_pass(launcher::run_job(spec), spec);
}
