// The run-time combinations every multi-process scenario is run over (provider x long-message
// protocol x restricted mode), and the assertions every scenario's job shares.
#pragma once

#include <string>
#include <vector>

#include "launcher.hpp"

namespace matrix {

// Sizes the scenarios are built around: eager_max +- 1 and buffer_size +- 1 sit between the
// paths, and 4 credits make flow control matter.
constexpr const char *kEagerMax = "4096";
constexpr const char *kBufferSize = "16384";
constexpr const char *kCredits = "4";

struct Combo {
    std::string provider;    // "shm" or "tcp;ofi_rxm"
    std::string protocol;    // "sendrecv", "rdma" or "rdma-write"; empty: the library's default
    std::string restricted;  // "0" or "1"; empty: the library's default
    // shm only: "0" leaves RDMA reads and writes to the provider instead of libmsg's own
    // cross-memory copies (VIADUCT_SHM_CMA); empty: the library's default.
    std::string cma = "";
    // "shm": libmsg's own shared-memory transport (VIADUCT_TRANSPORT; provider is then unused);
    // empty: the library's default (ofi).
    std::string transport = "";

    std::string name() const;
    // A job running `scenario` on `ranks` ranks with this combination and the standard sizes.
    launcher::JobSpec job(int ranks, int timeout_seconds, const std::string &scenario,
                          std::vector<std::string> args = {}) const;
};

// The shm transport with the library's default protocol and mode.
Combo shm_transport();
std::vector<Combo> providers();       // each provider, default protocol and mode; the shm transport
std::vector<Combo> full();            // every provider x protocol x mode (see matrix.cpp)
std::vector<Combo> with_protocols();  // every provider x protocol, unrestricted; the shm transport

// The job exited 0 and every one of `ranks` ranks printed its PASS line; on failure the
// combination and the end of the output are printed.
void expect_pass(const launcher::JobResult &result, const launcher::JobSpec &spec);

}  // namespace matrix
