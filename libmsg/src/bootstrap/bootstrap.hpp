// How a process joins its job: rank, size, allgather, barrier, and notices
// of failed peers. Implementations: a job of one, and the TCP coordinator
// (msgrun or VIADUCT_COORDINATOR); a PMIx one fits behind the same interface.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/job_key.hpp"

namespace msg {

class Bootstrap {
  public:
    virtual ~Bootstrap() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Everyone contributes `mine`; on success all[r] is rank r's bytes.
    // Returns 0, or a msg_status error with *error filled.
    virtual int allgather(const std::vector<uint8_t> &mine, std::vector<std::vector<uint8_t>> &all,
                          int timeout_ms, std::string *error) = 0;
    // Waits for every live rank. timeout_ms < 0: no limit.
    virtual int barrier(int timeout_ms, std::string *error) = 0;
    // Called (from a bootstrap thread) for each peer reported failed.
    virtual void on_peer_failed(std::function<void(int)> callback) = 0;
    // Leaves the job in order: peers will not see this rank as failed.
    virtual void leave() = 0;
    // How the job was joined: "tcp", "pmix" or "single".
    virtual const char *method() const = 0;
};

// What joining a job takes from msg_config_t.
struct BootstrapSettings {
    std::string method = "auto";  // auto, tcp, pmix or single
    int timeout_ms = 10000;
    int heartbeat_ms = 0;  // the coordinator link's; 0: from timeout_ms (common/config.hpp)
};

// Builds the bootstrap settings.method names; auto picks the first that the
// launcher's environment describes:
//   tcp     VIADUCT_COORDINATOR (host:port) with VIADUCT_RANK and VIADUCT_SIZE,
//           optionally hosting the coordinator on rank 0
//           (VIADUCT_COORDINATOR_HOST=1): msgrun, or processes started by hand
//   pmix    PMIX_NAMESPACE and PMIX_RANK from a PMIx server: mpirun, srun
//   single  a job of one
// Returns a msg_status code.
int make_bootstrap(const BootstrapSettings &settings, std::unique_ptr<Bootstrap> *out,
                   std::string *error);

int make_tcp_bootstrap(const BootstrapSettings &settings, std::unique_ptr<Bootstrap> *out,
                       std::string *error);

// A rank of a TCP-coordinated job, described by value instead of by the environment.
struct TcpJob {
    std::string host, port;  // the coordinator's
    int rank = 0, size = 1;
    bool host_coordinator = false;  // rank 0 serves the coordinator itself
    boot::JobKey key{};             // the job's secret (job_key.hpp)
    int heartbeat_ms = 0;           // the coordinator link's; 0: from the timeout
};
int connect_tcp_bootstrap(const TcpJob &job, int timeout_ms, std::unique_ptr<Bootstrap> *out,
                          std::string *error);
// MSG_ERR_NOT_SUPPORTED when built without libpmix (pmix_built() false).
bool pmix_built();
int make_pmix_bootstrap(int timeout_ms, std::unique_ptr<Bootstrap> *out, std::string *error);

}  // namespace msg
