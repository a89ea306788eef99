// The protocol choice: under auto (the default) and each protocol forced, on every provider and
// in both modes, each long message goes by the protocol msg_get_protocol_table gives its size.
#include <catch2/catch.hpp>

#include "matrix.hpp"

TEST_CASE("each long message goes by its size's protocol in the table", "[protocol_choice]") {
    std::vector<matrix::Combo> combos;
    for (const char *provider : {"shm", "tcp;ofi_rxm"})
        for (const char *protocol : {"", "auto", "sendrecv", "rdma", "rdma-write"})
            for (const char *restricted : {"0", "1"})
                combos.push_back({provider, protocol, restricted, ""});
    const matrix::Combo combo = GENERATE_COPY(from_range(combos));
    INFO(combo.name());
    const auto spec = combo.job(2, 90, "protocol_choice");
    matrix::expect_pass(launcher::run_job(spec), spec);
}
