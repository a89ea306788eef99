// Combinations of run-time options and the pass criteria shared by all scenario test cases.
#include "matrix.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

namespace matrix {

std::string Combo::name() const {
    std::string n = transport.empty() ? "provider=" + provider : "transport=" + transport;
    if (!protocol.empty()) n += " protocol=" + protocol;
    if (!restricted.empty()) n += " restricted=" + restricted;
    if (!cma.empty()) n += " cma=" + cma;
    return n;
}

launcher::JobSpec Combo::job(int ranks, int timeout_seconds, const std::string &scenario,
                             std::vector<std::string> args) const {
    launcher::JobSpec spec;
    spec.ranks = ranks;
    spec.timeout_seconds = timeout_seconds;
    spec.scenario = scenario;
    spec.args = std::move(args);
    spec.env = {{"VIADUCT_PROVIDER", provider},
                {"VIADUCT_EAGER_MAX", kEagerMax},
                {"VIADUCT_BUFFER_SIZE", kBufferSize},
                {"VIADUCT_CREDITS", kCredits}};
    if (!protocol.empty()) spec.env.emplace_back("VIADUCT_PROTOCOL", protocol);
    if (!restricted.empty()) spec.env.emplace_back("VIADUCT_RESTRICTED", restricted);
    if (!cma.empty()) spec.env.emplace_back("VIADUCT_SHM_CMA", cma);
    if (!transport.empty()) spec.env.emplace_back("VIADUCT_TRANSPORT", transport);
    return spec;
}

Combo shm_transport() {
    return {"shm", "", "", "", "shm"};
}

std::vector<Combo> providers() {
    return {{"shm", "", "", ""}, {"tcp;ofi_rxm", "", "", ""}, shm_transport()};
}

std::vector<Combo> full() {
    std::vector<Combo> all;
    // VIADUCT_TEST_MATRIX=cover (the sanitizer builds, where each job runs several times
    // slower): each provider x protocol pair once, restricted mode alternating so that every
    // provider and every protocol meets both modes, and the provider's own RDMA once.
    const char *matrix = std::getenv("VIADUCT_TEST_MATRIX");
    if (matrix != nullptr && std::string(matrix) == "cover") {
        bool restricted = false;
        for (const char *provider : {"shm", "tcp;ofi_rxm"})
            for (const char *protocol : {"sendrecv", "rdma", "rdma-write"}) {
                all.push_back({provider, protocol, restricted ? "1" : "0", ""});
                restricted = !restricted;
            }
        all.push_back({"shm", "rdma", "0", "0"});
        // The shm transport: its rings under the send/recv protocol's chunks, restricted.
        all.push_back({"shm", "sendrecv", "1", "", "shm"});
        return all;
    }
    for (const char *provider : {"shm", "tcp;ofi_rxm"})
        for (const char *protocol : {"sendrecv", "rdma", "rdma-write"})
            for (const char *restricted : {"0", "1"})
                all.push_back({provider, protocol, restricted, ""});
    // The provider's own RDMA reads and writes on shm, which libmsg's cross-memory copies
    // replace.
    all.push_back({"shm", "rdma", "0", "0"});
    all.push_back({"shm", "rdma-write", "0", "0"});
    // The shm transport: its own table of protocols by size (cross-memory reads and writes),
    // and every long message in chunks through its rings, restricted.
    all.push_back(shm_transport());
    all.push_back({"shm", "sendrecv", "1", "", "shm"});
    return all;
}

std::vector<Combo> with_protocols() {
    std::vector<Combo> all;
    for (const char *provider : {"shm", "tcp;ofi_rxm"})
        for (const char *protocol : {"sendrecv", "rdma", "rdma-write"})
            all.push_back({provider, protocol, "0", ""});
    all.push_back(shm_transport());
    return all;
}

void expect_pass(const launcher::JobResult &result, const launcher::JobSpec &spec) {
    const size_t passes = result.lines_with("PASS " + spec.scenario).size();
    const size_t failures = result.lines_with("FAIL").size();
    // One assertion, so a failure prints the output once; the summary says what went wrong.
    INFO("msgrun -n " << spec.ranks << " " << spec.scenario << ": status " << result.status << ", "
                      << passes << " of " << spec.ranks << " ranks passed, " << failures
                      << " FAIL lines" << (result.killed_by_driver ? ", killed by the driver" : "")
                      << ", " << result.seconds << " s; output:\n"
                      << result.tail());
    CHECK((!result.killed_by_driver && result.status == 0 && failures == 0 &&
           passes == static_cast<size_t>(spec.ranks)));
}

}  // namespace matrix
