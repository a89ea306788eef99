// Scenario "connect": every rank of a (large) local job connects in msg_init, reports how long
// that took, and then reaches every other rank.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "scenarios.hpp"

namespace worker {

void run_connect(const Args &) {
    constexpr int kTag = 3;
    Job job;
    check_info_matches_environment(job.info);
    WCHECK(job.info.connect_seconds > 0.0, "msg_get_info connect_seconds is %g",
           job.info.connect_seconds);
    WCHECK(job.info.provider[0] != '\0', "msg_get_info names no provider");
    // Only a job of one reports "self"; a larger one names the transport it opened.
    const char *transport = std::getenv("VIADUCT_TRANSPORT");
    if (job.size > 1)
        WCHECK(std::strcmp(job.info.transport, transport ? transport : "ofi") == 0,
               "msg_get_info transport '%s' in a job of %d, VIADUCT_TRANSPORT=%s",
               job.info.transport, job.size, transport ? transport : "(unset)");
    // libmsg loads libfabric only for the ofi transport (its providers' libraries cost 0.2 s of
    // start-up and install crash handlers); a job over shm or verbs never has it in the process.
    void *fabric = dlopen("libfabric.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (fabric != nullptr) dlclose(fabric);
    if (job.size > 1)
        WCHECK((fabric != nullptr) == (std::strcmp(job.info.transport, "ofi") == 0),
               "libfabric is %s in a job over the %s transport", fabric ? "loaded" : "not loaded",
               job.info.transport);
    if (job.rank == 0)
        say("connect_seconds=%.6f ranks=%d provider=%s", job.info.connect_seconds, job.size,
            job.info.provider);

    // All to all: one small message over every connection, both directions.
    Cq cq(job.ctx());
    std::vector<int> from(static_cast<size_t>(job.size), -1);
    for (int p = 0; p < job.size; ++p)
        if (p != job.rank)
            WSTATUS(msg_irecv(job.ctx(), p, kTag, &from[static_cast<size_t>(p)], sizeof(int),
                              cq.get(), nullptr),
                    MSG_OK);
    for (int p = 0; p < job.size; ++p)
        if (p != job.rank)
            WSTATUS(msg_isend(job.ctx(), p, kTag, &job.rank, sizeof(int), cq.get(), nullptr),
                    MSG_OK);
    for (int n = 0; n < 2 * (job.size - 1); ++n) {
        msg_completion_t c = wait_completion(cq.get(), "all-to-all");
        WCHECK(c.status == MSG_OK, "all-to-all: %s", describe(c).c_str());
    }
    for (int p = 0; p < job.size; ++p)
        if (p != job.rank)
            WCHECK(from[static_cast<size_t>(p)] == p, "message from %d says %d", p,
                   from[static_cast<size_t>(p)]);
    cq.destroy();
    WSTATUS(msg_barrier(job.ctx()), MSG_OK);
    job.finalize();
}

}  // namespace worker
